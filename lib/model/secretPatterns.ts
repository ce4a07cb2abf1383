import { rules as secretlintRules } from "@secretlint/secretlint-rule-preset-recommend";

/**
 * Where secrets are in a text. Two sources: the rules of secretlint's recommended preset (the
 * maintained set: provider key formats, run synchronously through their rule API, below), and the
 * shapes that preset does not cover (`SHAPES`), each with where its shape comes from.
 */

/** One secret found: its place in the text, its kind (the marker names it), and its rank where two overlap. */
interface Finding {
  start: number;
  end: number;
  kind: string;
  /** A named format (a provider's key, a JWT, a user's pattern) outranks a generic shape (an assignment, a header). */
  rank: number;
}

const RANK_SHAPE = 1;
export const RANK_FORMAT = 2;

// The part of secretlint's rule API these rules use (@secretlint/types, "SecretLintRuleCreator").
interface RuleSource {
  content: string;
  contentType: "text";
  filePath: string;
  ext: string;
}
interface RuleReport {
  message: RuleMessage;
  range: readonly [number, number];
}
/** What our translator makes of a rule's message: its kind, and the secret it names. */
interface RuleMessage {
  kind: string;
  secret?: string;
}
interface RuleContext {
  createTranslator(messages: Record<string, { en: (props: Record<string, string>) => string }>): (id: string, props?: Record<string, unknown>) => RuleMessage;
  report(report: RuleReport): void;
  ignore(): void;
}
interface RuleCreator {
  meta: { id: string; supportedContentTypes?: readonly string[] };
  create(context: RuleContext, options: object): { file?: (source: RuleSource) => unknown };
}

/** Its message with the secret left out, as a kind: "found GitHub Token(...): ghp_..." is "github token". */
function kindOfMessage(en: (props: Record<string, string>) => string): string {
  const blank = new Proxy({}, { get: () => "" });
  return en(blank)
    .replace(/^found\s+/i, "")
    .replace(/\([^)]*\)/g, "")
    .replace(/:.*$/s, "")
    .trim()
    .toLowerCase();
}

/**
 * Left out: `filter-comments` lets a `secretlint-disable` comment in the text switch rules off (a
 * prompt must not be able to); `gcp` reads key files by their extension, not text; `basicauth` and
 * `database-connection-string` find `user:password@` in URLs, which the "password in url" shape
 * below finds for every scheme, including the example-looking credentials those rules let pass
 * (a linter avoids false alarms; a redactor must not let a password through), and they were a large
 * share of the preset's time; `openai` finds only keys that hold `T3BlbkFJ`, and
 * the `sk-` shape below finds those and the newer keys without it; `github` reads on for the rest
 * of an app installation token from every `ghs_` it meets, as far as the token's first part may run,
 * so a text full of them stalled the writer: the GitHub shapes below find its three formats.
 */
export const SKIPPED_RULES: ReadonlySet<string> = new Set([
  "@secretlint/secretlint-rule-filter-comments",
  "@secretlint/secretlint-rule-github",
  "@secretlint/secretlint-rule-openai",
  "@secretlint/secretlint-rule-gcp",
  "@secretlint/secretlint-rule-basicauth",
  "@secretlint/secretlint-rule-database-connection-string",
]);
/** Access key ids are scanned too (off in the preset, where a linter reports only secret keys). */
const RULE_OPTIONS: Record<string, object> = { "@secretlint/secretlint-rule-aws": { enableIDScanRule: true } };

/** The preset's version the gates below were read from (the package is pinned, and bundled). */
export const GATES_READ_FROM = "13.0.7";

/**
 * A rule runs only on a text that holds its gate: text that every finding of each of the rule's
 * patterns contains, read from those patterns (case as they match it). One scan of all the gates
 * together tells a text with none of them, most text, from the rest: running every rule costs
 * several times that scan (`BENCH_ONLY=redaction`). A gate starts at a character prose seldom has (`_`, `-`, `.`) where it
 * can, the prefix before it looked behind: a scan that tries a common letter at every position of
 * a text is several times slower. A rule without a gate always runs (a test fails until a rule
 * the preset adds is given one or skipped).
 */
export const RULE_GATES: Readonly<Record<string, RegExp>> = {
  // An access key id's prefixes; `secret` of a secret access key's name, `account` of an account id's.
  "@secretlint/secretlint-rule-aws": /A(?:3T|KIA|GPA|IDA|ROA|IPA|NPA|NVA|SIA)|SECRET|[sS]ecret|ACCOUNT|[aA]ccount/,
  "@secretlint/secretlint-rule-npm": /_(?<=npm_)|_authToken=|-oauth-basic@github\.com/,
  // Its webhook pattern ignores case.
  "@secretlint/secretlint-rule-slack": /-(?<=xox[bpaor]-|xapp-)|\.(?<=[hH][oO][oO][kK][sS]\.)[sS][lL][aA][cC][kK]\.[cC][oO][mM]/,
  "@secretlint/secretlint-rule-anthropic": /-(?<=sk-)ant-api0/,
  "@secretlint/secretlint-rule-groq": /_(?<=gsk_)/,
  "@secretlint/secretlint-rule-huggingface": /_(?<=hf_)/,
  "@secretlint/secretlint-rule-linear": /_(?<=lin_)api_/,
  "@secretlint/secretlint-rule-notion": /_(?<=ntn_)/,
  "@secretlint/secretlint-rule-privatekey": /-----BEGIN/,
  "@secretlint/secretlint-rule-sendgrid": /\.(?<=SG\.)/,
  "@secretlint/secretlint-rule-shopify": /_(?<=shp(?:pa|ca|at|ss)_)/,
  "@secretlint/secretlint-rule-stripe": /_(?<=[sr]k_)(?:live|test)_/,
  "@secretlint/secretlint-rule-gitlab": /-(?<=glpat-)/,
  "@secretlint/secretlint-rule-grafana": /_(?<=glc_|glsa_)/,
  "@secretlint/secretlint-rule-1password": /_(?<=ops_)ey/,
  "@secretlint/secretlint-rule-hashicorp-vault": /\.(?<=hv[sbr]\.)/,
  "@secretlint/secretlint-rule-vercel": /_(?<=vc[piark]_)/,
  "@secretlint/secretlint-rule-databricks": /dapi/,
  "@secretlint/secretlint-rule-docker": /_(?<=dckr_)pat_/,
  "@secretlint/secretlint-rule-figma": /_(?<=figd_)/,
  "@secretlint/secretlint-rule-cloudflare": /_(?<=cf(?:k|ut|at)_)/,
  "@secretlint/secretlint-rule-tailscale": /-(?<=tskey-)/,
};
interface Scanner {
  file: (source: RuleSource) => unknown;
  /** Its gate, sticky: tried where the scan of all the gates stopped. */
  gate: RegExp | null;
  /** Its bit in the key of a set of gated scanners. */
  bit: number;
}

/** One scan for any of these scanners' gates, kept for the next text that leaves the same ones to find. */
const gateScans = new Map<number, RegExp>();
function anyGate(gated: readonly Scanner[]): RegExp {
  const key = gated.reduce((bits, scanner) => bits | scanner.bit, 0);
  let scan = gateScans.get(key);
  if (!scan) {
    // A text meets few gates, so few sets recur; the bound keeps unusual texts from growing it.
    if (gateScans.size >= 64) gateScans.clear();
    gateScans.set(key, (scan = new RegExp(gated.map((scanner) => `(?:${scanner.gate!.source})`).join("|"), "g")));
  }
  return scan;
}

/** The scanners a text needs run: those without a gate, and those whose gate is somewhere in it. */
function scannersFor(text: string, all: readonly Scanner[]): Scanner[] {
  const run = all.filter((scanner) => !scanner.gate);
  const gated = all.filter((scanner) => scanner.gate);
  let scan = anyGate(gated);
  scan.lastIndex = 0;
  for (let match = scan.exec(text); match; match = scan.exec(text)) {
    // Every gate that starts here, not only the alternative that matched.
    for (let i = gated.length - 1; i >= 0; i--) {
      const gate = gated[i]!.gate!;
      gate.lastIndex = match.index;
      if (gate.test(text)) run.push(...gated.splice(i, 1));
    }
    if (!gated.length) break;
    // Then on from the next character, for the gates not met yet: a text full of one gate is scanned once.
    scan = anyGate(gated);
    scan.lastIndex = match.index + 1;
  }
  return run;
}

let found: Finding[] = [];
let scanners: Scanner[] | null = null;

/** The preset's rules, and the shapes that have a gate: each run only on a text that holds its gate. */
function gatedScanners(): Scanner[] {
  if (scanners) return scanners;
  const kinds = new Map<string, string>();
  const rules = (secretlintRules as unknown as readonly RuleCreator[])
    .filter((rule) => !SKIPPED_RULES.has(rule.meta.id) && (rule.meta.supportedContentTypes ?? ["text"]).includes("text"))
    .map((rule) => {
      const context: RuleContext = {
        createTranslator:
          (messages) =>
          (id, props = {}) => {
            const key = `${rule.meta.id}:${id}`;
            let kind = kinds.get(key);
            if (kind === undefined) kinds.set(key, (kind = messages[id] ? kindOfMessage(messages[id].en) : rule.meta.id.replace(/^.*secretlint-rule-/, "")));
            const secret = SECRET_PROPS.map((name) => props[name]).find((value): value is string => typeof value === "string" && value !== "");
            return { kind, secret };
          },
        report: ({ message, range }) => found.push(placed(message, range)),
        ignore() {},
      };
      const handler = rule.create(context, RULE_OPTIONS[rule.meta.id] ?? {});
      if (!handler.file) throw new Error(`${rule.meta.id} has no file handler`);
      return { file: handler.file, gate: RULE_GATES[rule.meta.id] ?? null };
    });
  const shapes = SHAPES.filter((shape) => shape.gate).map((shape) => ({
    file: (source: RuleSource) => findPattern(source.content, shape.pattern, shape.kind, shape.rank, shape.groups, found, shape.from),
    gate: shape.gate!,
  }));
  scanners = [...rules, ...shapes].map(({ file, gate }, i) => ({ file, gate: gate && new RegExp(gate.source, "y"), bit: 2 ** i }));
  return scanners;
}

let scanning = "";

/** The message properties that carry the secret a rule found. */
const SECRET_PROPS = ["KEY", "TOKEN", "ID", "URI", "URL", "CREDENTIAL"];

/**
 * Where the secret is: the text the rule named, looked for from the start of its range. A rule's
 * range can start at the text before the secret (the AWS secret key's starts at the variable name
 * and is as long as the key), so the range alone could leave the secret's end in place.
 */
function placed(message: RuleMessage, range: readonly [number, number]): Finding {
  const at = message.secret ? scanning.indexOf(message.secret, range[0]) : -1;
  const [start, end] = at >= 0 ? [at, at + message.secret!.length] : range;
  return { start, end, kind: message.kind, rank: RANK_FORMAT };
}

/**
 * A shape the preset does not cover. `group`: the capture groups whose text is the secret (the
 * first one that matched), so `Bearer` and the variable's name stay; none: the whole match.
 */
interface Shape {
  kind: string | ((match: RegExpExecArray) => string | null);
  pattern: RegExp;
  groups?: readonly number[];
  /** Groups looked behind: the secret starts where the first that matched starts, and runs to the match's end. */
  from?: readonly number[];
  /** Text every match holds, as the rules' `RULE_GATES`: the shape runs only on a text the one scan for the gates found it in. */
  gate?: RegExp;
  rank: number;
  /** Where the shape is defined. */
  source: string;
}

const SECRET_WORDS: Record<string, string> = {
  password: "password",
  passwd: "password",
  pwd: "password",
  passphrase: "password",
  secret: "secret",
  secrets: "secret",
  token: "token",
  key: "key",
  apikey: "key",
  accesskey: "key",
  secretkey: "secret",
  privatekey: "key",
  credential: "credential",
  credentials: "credential",
};
/** Words that still say a secret joined to what it is for (`PGPASSWORD`, `NPMTOKEN`); not `key` (`monkey`) or `pwd` (`OLDPWD`). */
const JOINED_WORDS = ["password", "passwd", "passphrase", "secret", "token", "credential", "credentials"];
/** Single words that also start a line of prose ("Token: ..."); with a colon they need quotes. */
const PROSE_WORDS = new Set(["token", "credential", "credentials", "secrets"]);
/** Words that say a secret only beside another: a lone `key` names a map's or a keyboard's key, `PWD` the shell's working folder. */
const NOT_ALONE = new Set(["key", "pwd"]);
/** A reference to another variable, a flag, a count or a marker is not a secret; nor is base64's padding. */
const NOT_A_SECRET = /^(?:\$|\[redacted)|^(?:true|false|null|none|\d{1,6}|=+)$/i;

/** A name's words: `DB_PASSWORD`, `api-key`, `apiKey` and `client.secret` are two each. */
function wordsOf(name: string): string[] {
  return name.split(/[_.-]+|(?<=[a-z0-9])(?=[A-Z])/).map((word) => word.toLowerCase());
}

/** The kind one word says, or undefined. */
function wordKind(word: string): string | undefined {
  const joined = SECRET_WORDS[word] ? word : JOINED_WORDS.find((secret) => word.endsWith(secret));
  return joined && SECRET_WORDS[joined];
}

/** The kind an assignment's name says (`DB_PASSWORD`, `apiKey`, `"client_secret"`, `PGPASSWORD`), or null for another name. */
function assignmentKind(match: RegExpExecArray): string | null {
  const [separator, quote, name, arrow] = [match[0][0], match[1], match[2], match[3]];
  // After `=>` only a quoted value is a hash's (Ruby, PHP): `token => token.id` is a function.
  if (arrow && match[8] !== undefined) return null;
  if (NOT_A_SECRET.test(match[4] ?? match[5] ?? match[6] ?? match[7] ?? match[8] ?? "")) return null;
  const words = wordsOf(name!);
  const said = words.map(wordKind).find(Boolean);
  if (!said) return null;
  if (words.length === 1 && (NOT_ALONE.has(words[0]!) || (separator === ":" && !quote && PROSE_WORDS.has(words[0]!)))) return null;
  return said;
}

/** The kind a command's flag says by its last word (`--password`, `--api-key`), or null: `--token-file` takes a file. */
function flagKind(match: RegExpExecArray): string | null {
  if (NOT_A_SECRET.test(match[2] ?? match[3] ?? match[4] ?? "")) return null;
  const words = wordsOf(match[1]!);
  const last = words.at(-1)!;
  if (words.length === 1 && NOT_ALONE.has(last)) return null;
  return wordKind(last) ?? null;
}

/** An `sk-` key's provider, by the part after `sk-` the pattern matched (OpenAI's older keys hold `T3BlbkFJ`, base64 of "OpenAI"). */
function skKeyKind(match: RegExpExecArray): string {
  if (match[1] !== undefined || match[0].includes("T3BlbkFJ")) return "openai api token";
  if (match[2] !== undefined) return "openrouter api key";
  return "api key";
}

/** `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and `github_pat_`, scanned for as their `_`. */
const GITHUB_GATE = /_(?<=gh[pousr]_|github_pat_)/;

const SHAPES: readonly Shape[] = [
  {
    kind: "github token",
    // Scanned for as `_`, the prefix looked behind, as the gates are.
    pattern: /_(?:(?<=(?<!\p{L})(gh[pousr])_)[A-Za-z0-9_]{36}|(?<=(?<!\p{L})(github_pat)_)[A-Za-z0-9_]{82})(?![A-Za-z0-9_])/dgu,
    from: [1, 2],
    gate: GITHUB_GATE,
    rank: RANK_FORMAT,
    source:
      "GitHub's token formats as secretlint's GitHub rule reads them: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and 36 letters, digits or `_`; `github_pat_` and 82",
  },
  {
    kind: "github token",
    // Found from its first dot, the `ghs_<app id>_` part looked behind, so each dot reads back only to
    // the one before it; read from every `ghs_`, as the rule did, text full of them is read many times over.
    pattern: /\.(?<=(?<!\p{L})(ghs)_[0-9]{1,20}_[A-Za-z0-9_-]{1,1000}\.)[A-Za-z0-9_-]{1,10000}\.[A-Za-z0-9_-]{1,1000}(?![A-Za-z0-9_-])/dgu,
    from: [1],
    gate: GITHUB_GATE,
    rank: RANK_FORMAT,
    source:
      "GitHub App installation tokens in their newer format as secretlint's GitHub rule reads them (2026-04-24 changelog): `ghs_`, the app id, `_`, and a JWT's three base64url parts",
  },
  {
    kind: skKeyKind,
    // Scanned for as `sk-`, then looked behind (`task-` starts no key). A bare `sk-` key needs a digit,
    // so a long word after `sk-` is not one.
    pattern:
      /sk-(?<=(?<![A-Za-z0-9_-])sk-)(?:((?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,})|(or-v1-[0-9a-f]{64}(?![A-Za-z0-9]))|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{32,}(?![A-Za-z0-9_-]))/g,
    rank: RANK_FORMAT,
    source:
      "OpenAI's project, service account and admin keys (`sk-proj-`, `sk-svcacct-`, `sk-admin-`), OpenRouter's `sk-or-v1-` and 64 hex digits, and the bare `sk-` and 32 or more letters and digits of OpenAI's older keys and the providers that copied them (DeepSeek, Moonshot); every key secretlint's OpenAI rule finds (those that hold `T3BlbkFJ`), and the newer ones without it",
  },
  {
    kind: "jwt",
    // Lookbehind, not \b: a JWT glued to a word (`id_token=eyJ...`) is still one.
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
    rank: RANK_FORMAT,
    source:
      'RFC 7519 section 3 (JWS compact serialization, RFC 7515 section 7.1): three base64url parts joined by dots; the header and the claims are JSON objects, and base64url of `{"` is `eyJ`',
  },
  {
    kind: "bearer token",
    pattern: /\bauthorization\s*[:=]\s*["']?\s*bearer\s+([A-Za-z0-9._~+/-]+=*)|\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)/dgi,
    groups: [1, 2],
    rank: RANK_SHAPE,
    source: "RFC 6750 section 2.1: `Authorization: Bearer <b64token>`; outside that header, a token of 16 characters or more after `Bearer`",
  },
  {
    kind: "basic auth credentials",
    pattern: /\bauthorization\s*[:=]\s*["']?\s*basic\s+([A-Za-z0-9+/]+={0,2})/dgi,
    groups: [1],
    rank: RANK_SHAPE,
    source: "RFC 7617 section 2: `Authorization: Basic <base64 of user:password>`",
  },
  {
    kind: "password",
    pattern: /(?:^|\s)(?:-u|--user)[\s=]+["']?[^\s:"'@]+:([^\s"']+)/dg,
    groups: [1],
    rank: RANK_SHAPE,
    source: "curl(1), `-u, --user <user:password>`: a command line's basic auth credentials",
  },
  {
    kind: flagKind,
    // Scanned for as `--`, a word's start looked behind. A value starting like another flag, a redirect or a variable is not one.
    pattern:
      /--(?<=(?<![^\s"'`(])--)([A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*)(?:[ \t]*=[ \t]*|[ \t]+)(?:"((?:[^"\\\n]|\\.)+)"?|'((?:[^'\\\n]|\\.)+)'?|(?![-<>|&;$])([^\s"'`;|&<>)]+))/dg,
    groups: [2, 3, 4],
    gate: /--(?<=(?<![^\s"'`(])--)[A-Za-z]/,
    rank: RANK_SHAPE,
    source:
      "getopt_long(3)'s `--name=value` and `--name value`, for flags whose last word says secret, token, password or key (`--password=`, `--token`, `--api-key`)",
  },
  {
    kind: "password in url",
    // From the `://` (the scheme is looked behind): scanning for it is quicker than trying every word as a scheme.
    // The password runs to the authority's last `@`: one written unencoded holds `@` itself.
    pattern: /:\/\/(?<=[A-Za-z0-9]:\/\/)[^\s:/?#@"'<>]+:([^\s/?#"'<>]+)@/dg,
    groups: [1],
    rank: RANK_SHAPE,
    source: "RFC 3986 section 3.2.1: `user:password@` in a URI's authority, for any scheme (`postgres://user:pass@host`)",
  },
  {
    kind: assignmentKind,
    // Matched from its `=` or `:` (a lookbehind reads the name), so the scan tests one character
    // where no separator is, not a name at every word.
    pattern:
      /[=:](?<=(?<![A-Za-z0-9_.-]|:\/\/)(\\?["']?)((?:[A-Za-z_][A-Za-z0-9_.-]*?)?(?:secret|token|passw(?:or)?d|pwd|passphrase|key|credential)[A-Za-z0-9_.-]*)(?:\\?["'])?[ \t]*[=:])(?:(?<==)(>))?[ \t]*(?:\\"((?:\\\\\\"|[^"\\\n]|\\[^"\n])+)(?:\\")?|"((?:[^"\\\n]|\\.)+)"?|'((?:[^'\\\n]|\\.)+)'?|`([^`\n]+)`|([^\s"'`,;)}\]\\]+))/dgi,
    groups: [4, 5, 6, 7, 8],
    rank: RANK_SHAPE,
    // Not right after `://`: a URL's `user:password@` is the URL shape's.
    source:
      'POSIX shell assignment and `export NAME=value`, dotenv `NAME=value`, YAML `name: value`, JSON `"name": "value"` (its escapes: a quoted value runs to its closing quote, or to the line\'s end without one), also as JSON text inside a JSON string (`\\"password\\":\\"value\\"`: a tool\'s input sent as text) and Ruby\'s and PHP\'s `name => "value"`, for names whose words say secret, token, password (passwd, pwd, passphrase), key or credential, and all but key also joined to a prefix (`PGPASSWORD`, `NPMTOKEN`)',
  },
];

/**
 * Every match of a pattern, as findings: the whole match, the first of `groups` that matched, or
 * from where the first of `from` that matched starts to the match's end.
 */
export function findPattern(
  text: string,
  pattern: RegExp,
  kind: Shape["kind"],
  rank: number,
  groups: readonly number[] = [],
  into: Finding[] = [],
  from: readonly number[] = [],
): Finding[] {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    if (match[0] === "") {
      pattern.lastIndex++;
      continue;
    }
    const named = typeof kind === "string" ? kind : kind(match);
    if (named === null) continue;
    const end = match.index + match[0].length;
    if (from.length) {
      const start = from.map((g) => match.indices?.[g]?.[0]).find((at) => at !== undefined);
      if (start !== undefined) into.push({ start, end, kind: named, rank });
      continue;
    }
    const group = groups.find((g) => match[g] !== undefined);
    const span: readonly [number, number] | undefined = group === undefined ? [match.index, end] : match.indices?.[group];
    if (span) into.push({ start: span[0], end: span[1], kind: named, rank });
  }
  return into;
}

/** Every secret the maintained rules and the shapes find in `text` (overlapping, unsorted). */
export function findSecrets(text: string): Finding[] {
  const all = gatedScanners();
  found = [];
  scanning = text;
  const source: RuleSource = { content: text, contentType: "text", filePath: "", ext: "" };
  for (const scanner of scannersFor(text, all)) scanner.file(source);
  const findings = found;
  found = [];
  scanning = "";
  for (const shape of SHAPES) if (!shape.gate) findPattern(text, shape.pattern, shape.kind, shape.rank, shape.groups, findings, shape.from);
  return findings;
}
