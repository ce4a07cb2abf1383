import { describe, expect, it } from "vitest";
import { rules } from "@secretlint/secretlint-rule-preset-recommend";
import presetPackage from "@secretlint/secretlint-rule-preset-recommend/package.json";
import { GATES_READ_FROM, RULE_GATES, SKIPPED_RULES } from "../../lib/model/secretPatterns";
import { redactSecrets } from "../../lib/model/redaction";
import { chars, LOOK_ALIKES, SECRETS } from "../helpers/secrets";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";
const B64 = `${ALNUM}+/`;
const URL_SAFE = `${ALNUM}_-`;

/** A 1Password service account token's base64 part: JSON whose base64 ends in `fQ` (the closing brace). */
function onePasswordToken(): string {
  let json = JSON.stringify({
    email: "ejwe64qmlxhri@1passwordserviceaccounts.lcl",
    secretKey: `A3-${chars(ALNUM, 30, "op-key")}`,
    srpX: chars(HEX, 64, "op-srp"),
    signInAddress: "gotham.b5local.com:4000",
  });
  while (json.length % 3 !== 1) json = `${json.slice(0, -1)} }`;
  return Buffer.from(json).toString("base64");
}

/** One real-shaped example of each pattern of each rule the preset runs, beside the shared samples. */
const EXAMPLES: readonly string[] = [
  ...SECRETS.map((sample) => sample.line),
  `aws_account_id = "${chars("0123456789", 4, "acct-a")}-${chars("0123456789", 4, "acct-b")}-${chars("0123456789", 4, "acct-c")}"`,
  `//registry.npmjs.org/:_authToken=${chars(URL_SAFE, 36, "npmrc")}`,
  `npm publish --token npm_${chars(ALNUM, 36, "npm")}`,
  `git remote add origin https://${chars(HEX, 40, "xoauth")}:x-oauth-basic@github.com/acme/app.git`,
  `curl -X POST https://hooks.slack.com/services/T${chars(ALNUM, 8, "slack-t")}/B${chars(ALNUM, 8, "slack-b")}/${chars(ALNUM, 24, "slack-w")}`,
  `GROQ=gsk_${chars(ALNUM, 52, "groq")}`,
  `huggingface-cli login --token hf_${chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34, "hf")}`,
  `linear: lin_api_${chars(ALNUM, 40, "linear")}`,
  `notion: ntn_${chars("0123456789", 11, "notion-a")}${chars(ALNUM, 35, "notion-b")}`,
  `-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA${chars(B64, 64, "pem-a")}\n${chars(B64, 64, "pem-b")}\n-----END RSA PRIVATE KEY-----`,
  `SENDGRID=SG.${chars(ALNUM, 22, "sg-a")}.${chars(ALNUM, 43, "sg-b")}`,
  `shopify: shpat_${chars(HEX, 32, "shopify")}`,
  `stripe: rk_test_${chars(ALNUM, 24, "stripe-rk")}`,
  `GITHUB_APP=ghs_${chars("0123456789", 6, "ghs-a")}_${chars(URL_SAFE, 30, "ghs-b")}.${chars(URL_SAFE, 40, "ghs-c")}.${chars(URL_SAFE, 20, "ghs-d")}`,
  `token ghs_${chars(ALNUM, 36, "ghs-classic")}`,
  `gitlab: glpat-${chars(URL_SAFE, 20, "gitlab")}`,
  `grafana: glc_${chars(ALNUM, 40, "grafana-c")}==`,
  `grafana: glsa_${chars(ALNUM, 32, "grafana-sa")}_${chars(HEX, 8, "grafana-sa-hex")}`,
  `OP_SERVICE_ACCOUNT_TOKEN=ops_${onePasswordToken()}`,
  `VAULT_TOKEN=hvs.${chars(URL_SAFE, 95, "vault-s")}`,
  `vault batch hvb.${chars(URL_SAFE, 140, "vault-b")}`,
  `vault recovery hvr.${chars(URL_SAFE, 95, "vault-r")}`,
  `vercel: vcp_${chars(ALNUM, 24, "vercel")}`,
  `databricks: dapi${chars(HEX, 32, "databricks")}`,
  `docker login -p dckr_pat_${chars(URL_SAFE, 27, "docker")}`,
  `figma: figd_${chars(URL_SAFE, 40, "figma")}`,
  `cloudflare: cfut_${chars(ALNUM, 40, "cf-a")}${chars(HEX, 8, "cf-b")}`,
  `tailscale up --authkey tskey-auth-${chars(ALNUM, 12, "ts-a")}-${chars(ALNUM, 30, "ts-b")}`,
];

interface Rule {
  meta: { id: string };
  create(context: object, options: object): { file?: (source: object) => unknown };
}

/** What a rule of the preset, run as secretlint runs it and without any gate, reports in `text`: each report's range of it. */
function found(rule: Rule, text: string): string[] {
  const reported: string[] = [];
  const context = { createTranslator: () => () => ({}), report: ({ range }: { range: [number, number] }) => reported.push(text.slice(...range)), ignore() {} };
  const options = rule.meta.id === "@secretlint/secretlint-rule-aws" ? { enableIDScanRule: true } : {};
  rule.create(context, options).file?.({ content: text, contentType: "text", filePath: "", ext: "" });
  return reported;
}

function reports(rule: Rule, text: string): boolean {
  return found(rule, text).length > 0;
}

const RUN = (rules as unknown as Rule[]).filter((rule) => !SKIPPED_RULES.has(rule.meta.id));

describe("the gates in front of secretlint's rules", () => {
  it("were read from the preset's version that is installed (a new version: read its patterns again, then change GATES_READ_FROM)", () => {
    expect(presetPackage.version).toBe(GATES_READ_FROM);
  });

  it("exist for every rule the preset runs (a rule without one would run on every text)", () => {
    expect(RUN.map((rule) => rule.meta.id).filter((id) => !RULE_GATES[id])).toEqual([]);
  });

  it("let through every text a rule reports in, and each rule reports in one of the examples", () => {
    const corpus = [...EXAMPLES, ...LOOK_ALIKES];
    const silent: string[] = [];
    for (const rule of RUN) {
      const reported = corpus.filter((text) => reports(rule, text));
      if (reported.length === 0) silent.push(rule.meta.id);
      for (const text of reported) expect(RULE_GATES[rule.meta.id]!.test(text), `${rule.meta.id} on ${text.slice(0, 60)}`).toBe(true);
    }
    expect(silent).toEqual([]);
  });

  it("leave out only rules whose every find in the examples is redacted all the same", () => {
    for (const rule of (rules as unknown as Rule[]).filter((candidate) => SKIPPED_RULES.has(candidate.meta.id))) {
      for (const text of [...EXAMPLES, ...LOOK_ALIKES]) {
        for (const secret of found(rule, text)) expect(redactSecrets(text), `${rule.meta.id} found ${secret}`).not.toContain(secret);
      }
    }
    // The OpenAI rule's own shapes: a project key (74 characters on each side of the marker) and an older one.
    const openai = (rules as unknown as Rule[]).find((rule) => rule.meta.id === "@secretlint/secretlint-rule-openai")!;
    expect(SECRETS.filter((sample) => found(openai, sample.line).length > 0)).toHaveLength(2);
  });

  it.each(EXAMPLES.map((text) => [text.slice(0, 50), text] as const))("a gated rule still redacts: %s", (_label, text) => {
    expect(redactSecrets(text)).toContain("[redacted: ");
  });
});
