import { describe, expect, it } from "vitest";
import { compileExtraPattern, redactSecrets } from "../../lib/model/redaction";
import { LOOK_ALIKES, SECRETS } from "../helpers/secrets";

describe("redactSecrets", () => {
  it.each(SECRETS.map((sample) => [sample.kind, sample] as const))("replaces a %s with a marker that keeps its kind", (_kind, sample) => {
    const redacted = redactSecrets(`before\n${sample.line}\nafter`);
    expect(redacted).not.toContain(sample.secret);
    expect(redacted).toContain(`[redacted: ${sample.kind}]`);
    expect(redacted.startsWith("before\n") && redacted.endsWith("\nafter")).toBe(true);
  });

  it("keeps what is around a secret: the variable's name, the header, the URL's user and host", () => {
    const [password] = SECRETS.filter((sample) => sample.kind === "password in url");
    expect(redactSecrets(password!.line)).toBe("psql postgres://app_user:[redacted: password in url]@db.internal:5432/app");
    expect(redactSecrets("export DB_PASSWORD=hunter2-Correct-Horse")).toBe("export DB_PASSWORD=[redacted: password]");
    const github = SECRETS.find((sample) => sample.kind === "github token")!;
    // The format names the kind where a generic shape (a URL's password) finds the same text.
    expect(redactSecrets(github.line)).toBe("git clone https://x-access-token:[redacted: github token]@github.com/acme/app.git");
    const aws = SECRETS.find((sample) => sample.kind === "aws secret access key")!;
    expect(redactSecrets(aws.line)).toBe("aws_secret_access_key = [redacted: aws secret access key]");
  });

  it("keeps the name, the flag, the URL's user and host, and the quotes around a secret in each of its forms", () => {
    const cases: [string, string][] = [
      ["PGPASSWORD=Zq8vLm2Rt5 psql", "PGPASSWORD=[redacted: password] psql"],
      ["NPMTOKEN=Zq8vLm2Rt5", "NPMTOKEN=[redacted: token]"],
      ["mysql --password=Zq8vLm2Rt5 -h db", "mysql --password=[redacted: password] -h db"],
      ["vault login --token Zq8vLm2Rt5 -address=x", "vault login --token [redacted: token] -address=x"],
      ["tool --api-key 'Zq8 vLm2Rt5'", "tool --api-key '[redacted: key]'"],
      ["psql postgres://u:p@ss@w0rd@db/app?sslmode=require", "psql postgres://u:[redacted: password in url]@db/app?sslmode=require"],
      [`{"password": "ab\\"cd\\\\", "user": "ada"}`, `{"password": "[redacted: password]", "user": "ada"}`],
      // A value cut off before its closing quote is a secret to the end of the line.
      [`"password": "ab\\"cd\nnext`, `"password": "[redacted: password]\nnext`],
      [":password => 'Zq8vLm2Rt5'", ":password => '[redacted: password]'"],
      [`'db_password' => "Zq8vLm2Rt5",`, `'db_password' => "[redacted: password]",`],
      // JSON text inside a JSON string (a tool's input as Claude Code sends it): its quotes escaped, and a quote inside the value escaped twice.
      [
        String.raw`{"tool_input":"{\"user\":\"ada\",\"password\":\"Zq8vLm2Rt5\"}"}`,
        String.raw`{"tool_input":"{\"user\":\"ada\",\"password\":\"[redacted: password]\"}"}`,
      ],
      [String.raw`{\"api_key\": \"Zq8 \\\"vLm2\\\" Rt5\", \"n\": 1}`, String.raw`{\"api_key\": \"[redacted: key]\", \"n\": 1}`],
    ];
    for (const [text, redacted] of cases) expect(redactSecrets(text), text).toBe(redacted);
  });

  it("finds every secret of a text, several of them on one line", () => {
    const text = SECRETS.map((sample) => sample.line).join(" && ");
    const redacted = redactSecrets(text);
    for (const sample of SECRETS) expect(redacted).not.toContain(sample.secret);
    expect(redacted.match(/\[redacted: /g)).toHaveLength(SECRETS.length);
  });

  it.each(LOOK_ALIKES.map((text) => [text.slice(0, 40), text] as const))("leaves text that only looks like a secret as it is: %s", (_label, text) => {
    expect(redactSecrets(text)).toBe(text);
  });

  it("gives a redacted text back unchanged", () => {
    const once = redactSecrets(SECRETS.map((sample) => sample.line).join("\n"));
    // Redacted first, every one of them: a redactor that changed nothing would pass the rest.
    for (const sample of SECRETS) expect(once).not.toContain(sample.secret);
    expect(once.match(/\[redacted: [^\]]+\]/g)).toHaveLength(SECRETS.length);
    expect(redactSecrets(once)).toBe(once);
  });

  it("redacts a user's own format, named by the user's kind", () => {
    const extra = compileExtraPattern("internal token", "itk_[A-Za-z0-9]{32}", "test");
    const text = `call with itk_${"a1B2".repeat(8)} now`;
    expect(redactSecrets(text, [extra])).toBe("call with [redacted: internal token] now");
    expect(redactSecrets(text)).toBe(text);
    const insensitive = compileExtraPattern("badge", "/badge-[0-9]{6}/i", "test");
    expect(redactSecrets("BADGE-123456", [insensitive])).toBe("[redacted: badge]");
  });
});
