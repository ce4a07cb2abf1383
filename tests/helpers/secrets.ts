import { createHash } from "node:crypto";

/**
 * Secrets shaped as their issuers make them (lengths, alphabets, fixed parts), and text that only
 * looks like one. The random parts are derived from a name, so every run sees the same strings; none
 * is a live credential.
 */
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URL_SAFE = `${ALNUM}_-`;
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** `n` characters of `alphabet`, the same for the same seed. */
export function chars(alphabet: string, n: number, seed: string): string {
  let out = "";
  for (let block = 0; out.length < n; block++) {
    for (const byte of createHash("sha256").update(`${seed}:${block}`).digest()) {
      if (out.length < n) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

export interface SecretSample {
  /** What the marker says: `[redacted: <kind>]`. */
  kind: string;
  /** The secret itself: never in what is written. */
  secret: string;
  /** The line it comes in, as an agent writes it. */
  line: string;
}

const github = `ghp_${chars(ALNUM, 36, "github")}`;
const githubFineGrained = `github_pat_${chars(ALNUM, 22, "pat-a")}_${chars(ALNUM, 59, "pat-b")}`;
const openai = `sk-proj-${chars(URL_SAFE, 74, "openai-a")}T3BlbkFJ${chars(URL_SAFE, 74, "openai-b")}`;
const openaiLegacy = `sk-${chars(ALNUM, 20, "openai-c")}T3BlbkFJ${chars(ALNUM, 20, "openai-d")}`;
// Newer keys need not hold secretlint's `T3BlbkFJ`; nor do the `sk-` keys of providers that copied OpenAI's.
const openaiProject = `sk-proj-${chars(URL_SAFE, 64, "openai-e")}`;
const openaiServiceAccount = `sk-svcacct-${chars(URL_SAFE, 120, "openai-f")}`;
const skBare = `sk-${chars(ALNUM, 48, "sk-bare")}`;
const openrouter = `sk-or-v1-${chars("0123456789abcdef", 64, "openrouter")}`;
const anthropic = `sk-ant-api03-${chars(URL_SAFE, 93, "anthropic")}AA`;
const awsKeyId = `AKIA${chars(UPPER_DIGITS, 16, "aws-id")}`;
const awsSecret = chars(`${ALNUM}/+`, 40, "aws-secret");
const slack = `xoxb-${chars("0123456789", 12, "slack-a")}-${chars("0123456789", 13, "slack-b")}-${chars(ALNUM, 24, "slack-c")}`;
const stripe = `sk_live_${chars(ALNUM, 99, "stripe").slice(0, 24)}`;
const jwt = [
  Buffer.from('{"alg":"HS256","typ":"JWT"}').toString("base64url"),
  Buffer.from('{"sub":"1234567890","name":"Ada","iat":1716239022}').toString("base64url"),
  chars(URL_SAFE, 43, "jwt-signature"),
].join(".");
const bearer = chars(`${ALNUM}._-`, 40, "bearer");
const basic = Buffer.from("deploy:Tr0ub4dor&3").toString("base64");
const dbPassword = chars(ALNUM, 16, "db-password");
const joined = (seed: string) => chars(ALNUM, 16, seed);
const [pgPassword, dbJoined, rootPassword, npmToken] = [joined("pgpassword"), joined("dbpassword"), joined("rootpassword"), joined("npmtoken")];
const [flagPassword, flagToken, flagApiKey] = [joined("flag-password"), joined("flag-token"), joined("flag-api-key")];
const [atPassword, escapedQuote, rubyPassword, phpPassword] = [joined("at-password"), joined("escaped-quote"), joined("ruby"), joined("php")];

/**
 * Forms of a secret's name and place beyond `NAME=value`, each of which once reached the files: the
 * word joined to a prefix, a command's flag, a URL password holding `@`, a quoted value holding an
 * escaped quote, a Ruby or PHP hash.
 */
export const SECRET_FORMS: readonly SecretSample[] = [
  { kind: "password", secret: pgPassword, line: `PGPASSWORD=${pgPassword} psql -h db.internal app` },
  { kind: "password", secret: dbJoined, line: `export DBPASSWORD=${dbJoined}` },
  { kind: "password", secret: rootPassword, line: `docker run -e ROOTPASSWORD=${rootPassword} mysql` },
  { kind: "token", secret: npmToken, line: `NPMTOKEN=${npmToken} npm publish` },
  { kind: "password", secret: flagPassword, line: `mysql --password=${flagPassword} -h db.internal` },
  { kind: "token", secret: flagToken, line: `vault login --token ${flagToken}` },
  { kind: "key", secret: flagApiKey, line: `llm --api-key="${flagApiKey}" "hello"` },
  // The secret is the part after the `@` or the escaped quote: the part a redaction stopping there leaves.
  { kind: "password in url", secret: atPassword, line: `psql postgres://app:p@ss${atPassword}@db.internal/app` },
  { kind: "password", secret: escapedQuote, line: `{"user": "ada", "password": "ab\\"cd${escapedQuote}"}` },
  { kind: "password", secret: rubyPassword, line: `connect(:host => "db", :password => '${rubyPassword}')` },
  { kind: "password", secret: phpPassword, line: `$config = ['password' => "${phpPassword}"];` },
];

export const SECRETS: readonly SecretSample[] = [
  { kind: "openai api token", secret: openai, line: `export OPENAI_API_KEY=${openai}` },
  { kind: "openai api token", secret: openaiLegacy, line: `client = OpenAI(api_key="${openaiLegacy}")` },
  { kind: "openai api token", secret: openaiProject, line: `I pasted ${openaiProject} into the chat by mistake` },
  { kind: "openai api token", secret: openaiServiceAccount, line: `the worker runs as ${openaiServiceAccount}.` },
  { kind: "api key", secret: skBare, line: `client = Client(${skBare})` },
  { kind: "openrouter api key", secret: openrouter, line: `use ${openrouter} for the fallback model` },
  { kind: "anthropic claude api key", secret: anthropic, line: `curl https://api.anthropic.com/v1/messages -H "x-api-key: ${anthropic}"` },
  { kind: "github token", secret: github, line: `git clone https://x-access-token:${github}@github.com/acme/app.git` },
  { kind: "github token", secret: githubFineGrained, line: `gh auth login --with-token <<< ${githubFineGrained}` },
  { kind: "aws access key id", secret: awsKeyId, line: `aws configure set aws_access_key_id ${awsKeyId}` },
  { kind: "aws secret access key", secret: awsSecret, line: `aws_secret_access_key = ${awsSecret}` },
  { kind: "slack token", secret: slack, line: `SLACK_BOT=${slack} node bot.js` },
  { kind: "stripe live secret key", secret: stripe, line: `stripe.api_key = "${stripe}"` },
  { kind: "jwt", secret: jwt, line: `the session cookie was ${jwt}; it expired` },
  { kind: "bearer token", secret: bearer, line: `curl -H "Authorization: Bearer ${bearer}" https://api.example.com/v1/me` },
  { kind: "basic auth credentials", secret: basic, line: `Authorization: Basic ${basic}` },
  { kind: "password in url", secret: dbPassword, line: `psql postgres://app_user:${dbPassword}@db.internal:5432/app` },
  { kind: "password", secret: "hunter2-Correct-Horse", line: "export DB_PASSWORD=hunter2-Correct-Horse" },
  { kind: "secret", secret: "9f8e7d6c5b4a39281706", line: `{"client_secret": "9f8e7d6c5b4a39281706"}` },
  { kind: "token", secret: "tok_live_55aa7c1e", line: "SERVICE_TOKEN=tok_live_55aa7c1e ./deploy.sh" },
  { kind: "key", secret: "k3y-0f-the-kingdom", line: "ENCRYPTION_KEY='k3y-0f-the-kingdom'" },
  // A name that is the secret word alone.
  { kind: "password", secret: "hunter2xyz", line: "PASSWORD=hunter2xyz ./run.sh" },
  { kind: "password", secret: "hunter2hunter2", line: `{"user": "ada", "password": "hunter2hunter2"}` },
  { kind: "secret", secret: "s3cr3t-v4lue", line: "export SECRET=s3cr3t-v4lue" },
  { kind: "token", secret: "tkn-88e1f0c2", line: `"token": "tkn-88e1f0c2"` },
  { kind: "password", secret: "correct horse battery", line: `passphrase: "correct horse battery"` },
  ...SECRET_FORMS,
];

/** A small PNG, base64 as a data URL carries it. */
function pngBase64(): string {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const body = Buffer.from(chars(ALNUM, 3000, "png-body"), "latin1").map((byte, i) => (byte * 31 + i) & 0xff);
  return Buffer.concat([signature, body]).toString("base64");
}

/** Text that must be written exactly as given. */
export const LOOK_ALIKES: readonly string[] = [
  "Reverted to commit e3b231f0c8a9d4b5e6f7a8b9c0d1e2f3a4b5c6d7 (was 1176c0c).",
  "request 3f2b8c1e-9d4a-4f6b-8e2c-1a5b7c9d0e3f is stuck in processing",
  `<img src="data:image/png;base64,${pngBase64()}">`,
  "The token limit was reached: each token costs money, so trim the prompt. The key point is the bearer of bad news.",
  "Key: use the primary index. Token: a word piece. max_tokens=4096 and timeout=30",
  // A lone `key` (a map's, a keyboard's) and the shell's working folder.
  `{"key": "Enter", "code": "KeyA"} and key=user:123 in the cache log; cd /app (PWD=/app, OLDPWD=/home/ada)`,
  "sha256 of the tarball: 9b74c9897bac770ffc029102a200c5de0d2c4f5c1f8e3a6b7c8d9e0f1a2b3c4d",
  "Open http://localhost:4600/requests?state=failed and https://github.com/acme/app/pull/42",
  // `sk-` that starts no key: a package, a word's end, letters without a digit, too short.
  "pip install scikit-learn; the sk-learn docs; a task-0123456789abcdef0123456789abcdef0123 and desk-lamp",
  "sk-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV and sk-12345678 and sk-proj-short",
  // A word that merely ends in `key`, and flags that take no secret: a file, a switch, input from elsewhere.
  "monkey=banana hotkey=ctrl+k; gh auth login --with-token < token.txt; docker login --password-stdin -u ada; app --token-file ~/.app/token --tokens 4096",
  // Arrow functions: a parameter named like a secret is code, not a value.
  "const ids = tokens.map(token => token.id); passwords.filter((password) => password.length > 8)",
];
