import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli";
import { SECRET_FORMS, SECRETS } from "../helpers/secrets";
import { readRaw, tempParent, tempStateDir } from "../helpers/stateDir";

const openai = SECRETS.find((sample) => sample.kind === "openai api token")!;
const github = SECRETS.find((sample) => sample.kind === "github token")!;
const postgres = SECRETS.find((sample) => sample.kind === "password in url")!;

/** Every file under the state folder (the index, its WAL and the session files included), by its path there. */
function everyFile(root: string, dir = root): { name: string; text: string }[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? everyFile(root, full) : [{ name: path.relative(root, full), text: fs.readFileSync(full, "latin1") }];
  });
}

describe("the CLI redacts what it records", () => {
  it("writes the marker, never the secret, for a prompt, an output and a session's command", () => {
    const stateDir = tempStateDir();
    const created = runCli(["create", "--workspace", "hooks", "--id", "r1", "--prompt", `deploy with ${openai.line}`], { stateDir });
    expect(created.code).toBe(0);
    expect(runCli(["update", "r1", "--state", "processing"], { stateDir }).code).toBe(0);
    expect(runCli(["update", "r1", "--state", "completed", "--output", postgres.line], { stateDir }).code).toBe(0);
    expect(runCli(["session", "command", github.line, "--status", "completed"], { stateDir }).code).toBe(0);
    // A path is recorded, and said back, with its secret redacted: a hook's log keeps what it prints.
    const recorded = runCli(["session", "file", `keys/${github.secret}.txt`], { stateDir });
    expect(recorded).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Recorded keys\/\[redacted: github token\]\.txt in session \S+ \(1 change\(s\)\)\.\n$/),
    });
    const off = runCli(["session", "file", `keys/${github.secret}.txt`], { stateDir, env: { ...process.env, REQWATCH_DISABLED: "1" } });
    expect(off.code).toBe(0);
    expect(off.stdout + off.stderr).not.toContain(github.secret);

    const file = JSON.parse(readRaw(stateDir, "r1"));
    expect(file.prompt).toBe("deploy with export OPENAI_API_KEY=[redacted: openai api token]");
    expect(file.output).toBe("psql postgres://app_user:[redacted: password in url]@db.internal:5432/app");
    const sessions = fs.readdirSync(path.join(stateDir, "sessions")).map((name) => fs.readFileSync(path.join(stateDir, "sessions", name), "utf8"));
    expect(sessions.join("")).toContain("[redacted: github token]");
    for (const sample of [openai, github, postgres]) {
      expect(readRaw(stateDir, "r1")).not.toContain(sample.secret);
      expect(sessions.join("")).not.toContain(sample.secret);
      // Nor in the index, whose text search would otherwise find it.
      expect(fs.readFileSync(path.join(stateDir, "index.db"), "latin1")).not.toContain(sample.secret);
    }
  });

  it("redacts every form of a secret's name and place in every field create, update and session record", () => {
    const stateDir = tempStateDir();
    // One line each, so every form is in every field, whatever the forms around it.
    const text = SECRET_FORMS.map((sample) => sample.line).join("\n");
    const run = (args: string[]) => expect(runCli(args, { stateDir })).toMatchObject({ code: 0 });
    run(["create", "--workspace", "hooks", "--id", "forms", "--state", "processing", "--prompt", text]);
    run(["update", "forms", "--output", text, "--reason", "partial"]);
    run(["update", "forms", "--state", "failed", "--error", text, "--callback-success", "false", "--callback-attempts", "1", "--callback-error", text]);
    run(["create", "--workspace", "hooks", "--id", "prompted-later"]);
    run(["update", "prompted-later", "--prompt", text]);
    for (const sample of SECRET_FORMS) run(["session", "command", sample.line, "--status", "failed"]);
    run(["session", "snapshot", "--task", text, "--next", text, "--blocker", text]);
    run(["session", "file", "deploy/.env", "--summary", text]);

    const file = JSON.parse(readRaw(stateDir, "forms"));
    for (const field of ["prompt", "output", "error"]) expect(file[field].match(/\[redacted: /g), field).toHaveLength(SECRET_FORMS.length);
    const written = everyFile(stateDir);
    expect(written.map((entry) => entry.name)).toEqual(
      expect.arrayContaining([path.join("requests", "forms.json"), "index.db", expect.stringMatching(/^sessions\/.+\.json$/)]),
    );
    for (const sample of SECRET_FORMS) {
      for (const { name, text: content } of written) expect(content, `${sample.line} in ${name}`).not.toContain(sample.secret);
    }
  });

  it("leaves the fields REQWATCH_REDACT_RAW names raw", () => {
    const stateDir = tempStateDir();
    const env = { ...process.env, REQWATCH_REDACT_RAW: "prompt" };
    expect(
      runCli(["create", "--workspace", "hooks", "--id", "raw", "--prompt", openai.line, "--set", `output=${JSON.stringify(openai.line)}`], { stateDir, env })
        .code,
    ).toBe(0);
    const file = JSON.parse(readRaw(stateDir, "raw"));
    expect(file.prompt).toBe(openai.line);
    expect(file.output).toBe("export OPENAI_API_KEY=[redacted: openai api token]");
  });

  it("refuses a bad setting with its message and exit 2 (a usage error), and records nothing", () => {
    const stateDir = path.join(tempParent(), "state");
    const result = runCli(["create", "--workspace", "hooks", "--prompt", openai.line], {
      stateDir,
      env: { ...process.env, REQWATCH_REDACT_PATTERNS: '{"ticket": "tk_[a-z"}' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`reqwatch: error: REQWATCH_REDACT_PATTERNS: the pattern for "ticket" is not a valid regular expression`);
    expect(fs.existsSync(stateDir)).toBe(false);
  });
});
