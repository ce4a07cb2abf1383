import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../lib/model/redaction";
import { RULE_GATES } from "../../lib/model/secretPatterns";

/**
 * Where each pattern starts, for each rule of the preset that runs and for the shapes: the text a
 * pattern reads on from, or goes back over, when a text repeats it. A rule the preset adds fails the
 * first test until it has its starts here.
 */
const STARTS: Record<string, readonly string[]> = {
  "@secretlint/secretlint-rule-aws": [
    "AKIA",
    "A3TA",
    "aws_secret_access_key=",
    "AWS_SECRET_ACCESS_KEY",
    "Secret_Access_Key: ",
    "aws_account_id=",
    "ACCOUNT_ID=",
  ],
  "@secretlint/secretlint-rule-npm": ["npm_", "_authToken=", "https://a:x-oauth-basic@github.com/", "https://", "-oauth-basic@github.com"],
  "@secretlint/secretlint-rule-slack": ["xoxb-", "xoxb-1-", "xapp-", "https://hooks.slack.com/services/T", "hooks.slack.com/services/Ta/Bb/"],
  "@secretlint/secretlint-rule-anthropic": ["sk-ant-api03-"],
  "@secretlint/secretlint-rule-groq": ["gsk_"],
  "@secretlint/secretlint-rule-huggingface": ["hf_"],
  "@secretlint/secretlint-rule-linear": ["lin_api_"],
  "@secretlint/secretlint-rule-notion": ["ntn_", "ntn_00000000000"],
  "@secretlint/secretlint-rule-privatekey": ["-----BEGIN ", "-----BEGIN RSA PRIVATE KEY-----\n", "-----END PRIVATE KEY-----"],
  "@secretlint/secretlint-rule-sendgrid": ["SG.", "SG.a.", "SG.a.a-"],
  "@secretlint/secretlint-rule-shopify": ["shpat_"],
  "@secretlint/secretlint-rule-stripe": ["sk_live_", "rk_test_"],
  "@secretlint/secretlint-rule-gitlab": ["glpat-"],
  "@secretlint/secretlint-rule-grafana": ["glc_", "glsa_"],
  "@secretlint/secretlint-rule-1password": ["ops_ey"],
  "@secretlint/secretlint-rule-hashicorp-vault": ["hvs.", "hvb.", "hvr."],
  "@secretlint/secretlint-rule-vercel": ["vcp_"],
  "@secretlint/secretlint-rule-databricks": ["dapi"],
  "@secretlint/secretlint-rule-docker": ["dckr_pat_"],
  "@secretlint/secretlint-rule-figma": ["figd_"],
  "@secretlint/secretlint-rule-cloudflare": ["cfk_", "cfut_"],
  "@secretlint/secretlint-rule-tailscale": ["tskey-", "tskey-ab-", "tskey-ab-abcdefgh-"],
  shapes: [
    ...["ghp_", "github_pat_", "ghs_0_", "ghs_0_a.", "ghs_0_a.b."],
    ...["sk-", "sk-proj-", "sk-or-v1-", "eyJ", "eyJaaaaaaaa.eyJ", "eyJaaaaaaaa.eyJaaaaaaaa."],
    ...["Authorization: Bearer ", "bearer ", "Authorization: Basic ", " -u ", " --user=", " -u a:"],
    ...[" --password ", " --password=", " --api-key=", ' --token "', " --a-b-c-token "],
    ...["://", "a://b:", "a://b:c@"],
    ...["password=", "password:", '"password": "', "'password' => '", "PGPASSWORD=", "key=", "://key=", "a.token:", "token => "],
  ],
};
/** What may follow a start: nothing, one of each kind of character a pattern treats apart, a word. */
const FOLLOWERS = ["", "a", "0", "_", "-", ".", " ", ":", "@", "/", '"', "\\"];

const N = 4 * 1024;
const ORDINARY = "The worker retried the request after its callback failed; see the log for what it sent. ";
/**
 * How much more a KB of crafted text may cost than a KB of ordinary text: well above the costliest
 * pattern left (secretlint's Figma rule, which reads on from every `figd_`), well below what
 * secretlint's GitHub rule cost on `ghs_0_` repeated before the GitHub shapes replaced it.
 */
const PER_KB = 100;
/** Four times the text may take at most this many times as long: linear is four, quadratic sixteen. */
const GROWTH = 8;

function repeated(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/**
 * This process's CPU time, in ms: unlike the clock, it does not count the time other processes took
 * the core. (A thread's own, process.threadCpuUsage, moves only at the scheduler's ticks: 0 for a short call.)
 */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The cheapest of a few runs, in ms of CPU: what the redactor costs without what the machine adds. */
function cost(text: string, runs: number): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = cpuMs();
    redactSecrets(text);
    best = Math.min(best, cpuMs() - started);
  }
  return best;
}

interface Measure {
  unit: string;
  /** Against ordinary text of the same length. */
  perKb: number;
  /** Four times the text against the text. */
  growth: number;
}

describe("redaction's cost on text crafted against its patterns", () => {
  it("has crafted starts for every rule that runs", () => {
    expect(Object.keys(RULE_GATES).filter((id) => !STARTS[id])).toEqual([]);
  });

  it("grows linearly with the text and stays within a bound per KB of what ordinary text costs", () => {
    // Times compared with times taken alongside on the same machine, so the bound holds on any machine.
    const ordinary = repeated(ORDINARY, 4 * N);
    cost(ordinary, 50);
    const measure = (unit: string, runs: number): Measure => {
      const base = cost(ordinary, runs);
      const small = cost(repeated(unit, N), runs);
      const large = cost(repeated(unit, 4 * N), runs);
      return { unit, perKb: large / base, growth: large / small };
    };
    const units = Object.values(STARTS).flatMap((starts) => starts.flatMap((start) => FOLLOWERS.map((follower) => start + follower)));
    // A slow measure is taken again with more runs: a pause of the machine's is not the pattern's.
    const over = (m: Measure) => m.perKb > PER_KB || m.growth > GROWTH;
    const measured = units.map((unit) => measure(unit, 2)).map((m) => (over(m) ? measure(m.unit, 9) : m));
    const worst = [...measured].sort((a, b) => b.perKb - a.perKb).slice(0, 5);
    expect(measured.filter(over), `slowest: ${JSON.stringify(worst)}`).toEqual([]);
  });
});
