import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli";
import { tempParent } from "../helpers/stateDir";

const AS_ROOT = process.getuid?.() === 0;
/** Root may do anything: the permission cases run the CLI as nobody. */
const UNPRIVILEGED = AS_ROOT ? { uid: 65534, gid: 65534 } : {};

function reqwatch(args: string[], env: Record<string, string> = {}, runAs: { uid?: number; gid?: number } = {}) {
  // A bound, not a pace: the /proc case looped for ever; anything that answers at all answers in far less.
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
    ...runAs,
  });
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/** One line on stderr naming the folder and the problem, exit 2, nothing on stdout. */
function expectRefused(result: ReturnType<typeof reqwatch>, folder: string, problem: RegExp): void {
  expect(result.signal).toBeNull();
  expect(result.stdout).toBe("");
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(result.stderr.startsWith(`reqwatch: error: Cannot use the state directory ${folder}: `)).toBe(true);
  expect(result.stderr).toMatch(problem);
  expect(result.code).toBe(2);
}

describe("a state folder reqwatch cannot use", () => {
  it("under /proc or /sys: refused in a line, never the endless loop of a recursive mkdir", () => {
    expectRefused(
      reqwatch(["create", "--workspace", "w", "--state-dir", "/proc/1/newdir"]),
      "/proc/1/newdir",
      /\/proc\/1 is on proc, a file system the kernel makes up/,
    );
    expectRefused(reqwatch(["adopt", "--state-dir", "/proc/1"]), "/proc/1", /is on proc/);
    expectRefused(reqwatch(["list", "--state-dir", "/sys/kernel"]), "/sys/kernel", /is on sysfs/);
  });

  it("below a file, or with a name too long: refused in a line", () => {
    const parent = tempParent();
    const file = path.join(parent, "a-file");
    fs.writeFileSync(file, "x");
    expectRefused(
      reqwatch(["create", "--workspace", "w", "--state-dir", path.join(file, "state")]),
      path.join(file, "state"),
      /a-file is a file, not a folder/,
    );
    const long = path.join(parent, "n".repeat(300));
    expectRefused(reqwatch(["create", "--workspace", "w", "--state-dir", long]), long, /in its path is too long \(300 bytes; the limit is 255\)/);
    expect(fs.readdirSync(parent)).toEqual(["a-file"]);
  });

  it("that its user may not read or write: the state folder is named, not the cache folder it would have used", () => {
    const parent = tempParent();
    fs.chmodSync(parent, 0o755);
    const closed = path.join(parent, "closed");
    fs.mkdirSync(path.join(closed, "requests"), { recursive: true });
    fs.writeFileSync(path.join(closed, "requests", "a.json"), "{}");
    fs.chmodSync(closed, 0o700);
    if (!AS_ROOT) fs.chmodSync(closed, 0o000);
    const readOnly = path.join(parent, "read-only");
    fs.mkdirSync(readOnly, { mode: 0o555 });
    fs.chmodSync(readOnly, 0o555);
    const noHome = { HOME: "/nonexistent", XDG_CACHE_HOME: "" };
    try {
      expectRefused(reqwatch(["list", "--state-dir", closed], noHome, UNPRIVILEGED), closed, /no permission to read .*closed \(owner uid \d+, mode 0[0-7]{3}/);
      expectRefused(
        reqwatch(["create", "--workspace", "w", "--state-dir", path.join(closed, "sub")], noHome, UNPRIVILEGED),
        path.join(closed, "sub"),
        /no permission to read .*closed/,
      );
      expectRefused(
        reqwatch(["create", "--workspace", "w", "--state-dir", path.join(readOnly, "state")], noHome, UNPRIVILEGED),
        path.join(readOnly, "state"),
        /no permission to write in .*read-only \(owner uid \d+, mode 0555/,
      );
      expectRefused(reqwatch(["adopt", "--state-dir", readOnly], noHome, UNPRIVILEGED), readOnly, /no permission to write in/);
    } finally {
      fs.chmodSync(closed, 0o700);
    }
    expect(fs.readdirSync(readOnly)).toEqual([]);
  });
});

describe("exit codes a script can rely on", () => {
  it("a usage error is one line, exit 2, the suggestion on it too", () => {
    for (const args of [["lst"], ["list", "--bogus"], ["get"], ["list", "--limit", "0"]]) {
      const result = reqwatch(args, { REQWATCH_STATE_DIR: tempParent() });
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr.trimEnd().split("\n"), args.join(" ")).toEqual([expect.stringMatching(/^reqwatch: error: /)]);
    }
    expect(reqwatch(["lst"]).stderr).toBe("reqwatch: error: unknown command 'lst' (Did you mean list?)\n");
  });

  it("a bad option value is exit 2 naming the option, whatever the option, and writes nothing", () => {
    const stateDir = path.join(tempParent(), "state");
    const env = { REQWATCH_STATE_DIR: stateDir };
    const id = reqwatch(["create", "--workspace", "w", "--id", "r1"], env).stdout.trim();
    const before = reqwatch(["get", id], env).stdout;
    const cases: [string[], string][] = [
      [["create", "--workspace", "w", "--max-attempts", "-2"], "--max-attempts <n>' argument '-2' is invalid. -2 is too small: use 1 or more."],
      [["create", "--workspace", "w", "--max-attempts", "0"], "--max-attempts <n>' argument '0' is invalid. 0 is too small: use 1 or more."],
      [["update", id, "--tokens", "-5"], "--tokens <n>' argument '-5' is invalid. -5 is too small: use 0 or more."],
      [["update", id, "--callback-attempts", "-1"], "--callback-attempts <n>' argument '-1' is invalid. -1 is too small: use 0 or more."],
      [["list", "--limit", "-5"], "--limit <n>' argument '-5' is invalid. -5 is out of range: use 1 to 1000."],
    ];
    for (const [args, said] of cases) {
      const result = reqwatch(args, env);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(/^reqwatch: error: option '/);
      expect(result.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.stderr, args.join(" ")).toContain(said);
    }
    expect(reqwatch(["get", id], env).stdout).toBe(before);
    expect((JSON.parse(reqwatch(["list", "--json"], env).stdout) as { items: unknown[] }).items).toHaveLength(1);
  });

  it("cancel and retry exit 1 when a named request was not changed, and say how many on stderr", () => {
    const stateDir = path.join(tempParent(), "state");
    const env = { REQWATCH_STATE_DIR: stateDir };
    expect(reqwatch(["create", "--workspace", "w", "--id", "q1", "--state", "queued"], env).code).toBe(0);
    expect(reqwatch(["create", "--workspace", "w", "--id", "q2", "--state", "queued"], env).code).toBe(0);

    const missing = reqwatch(["cancel", "nope"], env);
    expect(missing).toMatchObject({ code: 1, stderr: "reqwatch: 1 of 1 named request(s) were not cancelled (the lines above say why).\n" });
    expect(missing.stdout).toContain("skipped nope");
    expect(reqwatch(["retry", "q1"], env)).toMatchObject({
      code: 1,
      stderr: "reqwatch: 1 of 1 named request(s) were not retried (the lines above say why).\n",
    });
    expect(reqwatch(["cancel", "q1", "nope", "--json"], env)).toMatchObject({ code: 1 });
    expect(reqwatch(["cancel", "q2", "--dry-run"], env)).toMatchObject({ code: 0 });
    // All done, named twice or not: 0.
    expect(reqwatch(["cancel", "q2", "q2"], env)).toMatchObject({ code: 0, stderr: "" });
    // A filter that matches nothing asked for nothing in particular: 0.
    expect(reqwatch(["retry", "--state", "timeout"], env)).toMatchObject({ code: 0, stderr: "" });
  });
});

describe("text too long for a command line", () => {
  it("comes from a file or stdin: a 1 MB prompt, output and error, whole", () => {
    const parent = tempParent();
    const env = { REQWATCH_STATE_DIR: path.join(parent, "state") };
    const prompt = `${"p".repeat(1024 * 1024)}\nthe end`;
    const output = `${"o".repeat(1024 * 1024)}\nüñíçødé`;
    fs.writeFileSync(path.join(parent, "prompt.txt"), prompt);
    const created = reqwatch(["create", "--workspace", "w", "--state", "processing", "--prompt-file", path.join(parent, "prompt.txt")], env);
    expect(created).toMatchObject({ code: 0, stderr: "" });
    const id = created.stdout.trim();
    const fromStdin = spawnSync(process.execPath, [BIN, "update", id, "--state", "completed", "--output-file", "-"], {
      input: output,
      encoding: "utf8",
      env: { ...process.env, ...env },
    });
    expect(fromStdin).toMatchObject({ status: 0, stderr: "" });
    const request = JSON.parse(reqwatch(["get", id], env).stdout) as { prompt: string; output: string };
    expect(request.prompt).toBe(prompt);
    expect(request.output).toBe(output);
  });

  it("is refused in a line when the file is missing, a folder, or given with its flag, or when two want stdin", () => {
    const parent = tempParent();
    const env = { REQWATCH_STATE_DIR: path.join(parent, "state") };
    const id = reqwatch(["create", "--workspace", "w"], env).stdout.trim();
    expect(reqwatch(["update", id, "--error-file", path.join(parent, "nope.txt")], env)).toMatchObject({
      code: 2,
      stderr: `reqwatch: error: --error-file: ${path.join(parent, "nope.txt")} does not exist.\n`,
    });
    expect(reqwatch(["update", id, "--error-file", parent], env)).toMatchObject({
      code: 2,
      stderr: `reqwatch: error: --error-file: ${parent} is a folder, not a file.\n`,
    });
    expect(reqwatch(["update", id, "--prompt", "x", "--prompt-file", "-"], env)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/cannot be used with option '--prompt/),
    });
    expect(reqwatch(["update", id, "--output-file", "-", "--error-file", "-"], env)).toMatchObject({
      code: 2,
      stderr: "reqwatch: error: only one of --output-file, --error-file can read stdin (-).\n",
    });
    expect(JSON.parse(reqwatch(["get", id], env).stdout)).toMatchObject({ version: 1 });
  });
});

describe("hints that are pasted", () => {
  it("explain's Run: line works for an id that starts with a dash", () => {
    const env = { REQWATCH_STATE_DIR: path.join(tempParent(), "state") };
    expect(reqwatch(["create", "--workspace", "w", "--id=-abc"], env)).toMatchObject({ code: 0 });
    const story = reqwatch(["explain", "--", "-abc"], env);
    const run = /Run: reqwatch (.*)$/m.exec(story.stdout)![1]!;
    expect(run).toBe("update --state queued -- -abc");
    expect(reqwatch(run.split(" "), env)).toMatchObject({ code: 0 });
    expect(JSON.parse(reqwatch(["get", "--", "-abc"], env).stdout)).toMatchObject({ state: "queued" });
  });
});
