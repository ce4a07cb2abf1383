import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { anOldCompletedRequest, aStuckProcessingRequest, writeRequestFile } from "../helpers/builders";
import { BIN, runCli } from "../helpers/cli";
import path from "node:path";
import { aRequest } from "../helpers/builders";
import { readRaw, requestPath, tempForeignDir, tempParent, tempStateDir } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { makeGatewayFolder } from "../helpers/gatewayFolder";

describe("reqwatch CLI", () => {
  it("create prints the new id, or the whole request with --json", () => {
    const stateDir = tempStateDir();
    const plain = runCli(["create", "--workspace", "gw", "--id", "cli-1", "--chat-id", "77", "--prompt", "hi"], { stateDir });
    expect(plain).toMatchObject({ code: 0, stdout: "cli-1\n", stderr: "" });
    const json = runCli(["create", "-w", "gw", "--state", "queued", "--json", "--set", 'ticket="T-9"'], { stateDir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ workspace: "gw", state: "queued", ticket: "T-9", version: 1 });
    expect(JSON.parse(readRaw(stateDir, "cli-1"))).toMatchObject({ chatId: "77", prompt: "hi" });
  });

  it("update applies a transition and fields, and merges callback metadata (the stop hook)", () => {
    const stateDir = tempStateDir();
    runCli(["create", "-w", "gw", "--id", "hook", "--state", "processing"], { stateDir });
    const done = runCli(["update", "hook", "--state", "completed", "--output", "ok", "--tokens", "12", "--exit-code", "0"], { stateDir });
    expect(done).toMatchObject({ code: 0, stdout: "hook completed (version 2)\n" });

    runCli(
      [
        "update",
        "hook",
        "--callback-success",
        "false",
        "--callback-attempts",
        "1",
        "--callback-retry-timestamp",
        "2026-11-22T10:00:00Z",
        "--callback-error",
        "503",
      ],
      { stateDir },
    );
    const second = runCli(
      [
        "update",
        "hook",
        "--callback-success",
        "true",
        "--callback-attempts",
        "2",
        "--callback-retry-timestamp",
        "2026-11-22T10:00:05Z",
        "--reason",
        "delivered",
        "--by",
        "stop-hook",
        "--json",
      ],
      { stateDir },
    );
    expect(second.code).toBe(0);
    const request = JSON.parse(second.stdout);
    expect(request.callback).toEqual({ success: true, attempts: 2, retryTimestamps: ["2026-11-22T10:00:00Z", "2026-11-22T10:00:05Z"], error: "503" });
    expect(request.transitions.at(-1)).toMatchObject({ from: "completed", to: "completed", reason: "delivered", by: "stop-hook", fields: ["callback"] });
  });

  it("get prints the request as JSON", () => {
    const stateDir = tempStateDir();
    runCli(["create", "-w", "gw", "--id", "g1", "--model", "m1"], { stateDir });
    const result = runCli(["get", "g1"], { stateDir });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(JSON.parse(readRaw(stateDir, "g1")));
  });

  it("list prints a table, filters, and pages as JSON", () => {
    const stateDir = tempStateDir();
    for (const [id, ws, state] of [
      ["l1", "a", "queued"],
      ["l2", "a", "created"],
      ["l3", "b", "queued"],
    ]) {
      runCli(["create", "-w", ws!, "--id", id!, "--state", state!], { stateDir });
    }
    const table = runCli(["list", "--state", "queued"], { stateDir });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+WORKSPACE\s+STATE/);
    expect(table.stdout).toContain("l1");
    expect(table.stdout).toContain("l3");
    expect(table.stdout).not.toContain("l2");

    const first = JSON.parse(runCli(["list", "--json", "--limit", "2", "--workspace", "a", "--state", "queued,created"], { stateDir }).stdout);
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toBeNull();
    const paged = JSON.parse(runCli(["list", "--json", "--limit", "2"], { stateDir }).stdout);
    const rest = JSON.parse(runCli(["list", "--json", "--limit", "2", "--cursor", paged.nextCursor], { stateDir }).stdout);
    expect([...paged.items, ...rest.items].map((r: { requestId: string }) => r.requestId).sort()).toEqual(["l1", "l2", "l3"]);
    expect(runCli(["list"], { stateDir: tempStateDir() }).stdout).toBe("No requests match.\n");
  });

  it("recover reports stuck processing requests it timed out, unreadable files and fixes", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aStuckProcessingRequest("stuck"));
    fs.writeFileSync(requestPath(stateDir, "broken"), "{");
    const human = runCli(["recover"], { stateDir });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Scanned 2 request files/);
    expect(human.stdout).toMatch(/Timed out 1 stuck request\(s\) \(processing > 1h, no worker holding them\): stuck/);
    expect(human.stdout).toMatch(/Unreadable \(kept\): requests\/broken.json: invalid JSON/);
    const json = JSON.parse(runCli(["recover", "--json", "--processing-stuck-after", "10m"], { stateDir }).stdout);
    expect(json).toMatchObject({ scanned: 2, timedOut: [], unreadable: [{ file: "requests/broken.json" }] });
  });

  it("recover refuses the processing stuck threshold's old names, flag and variable, in one line naming the new one, and changes nothing", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "half-hour", state: "processing", processingStartedAt: Date.now() - 30 * 60_000 }));
    const before = fs.readFileSync(requestPath(stateDir, "half-hour"), "utf8");
    expect(runCli(["recover", "--json", "--hung-after", "20m"], { stateDir })).toEqual({
      code: 2,
      stdout: "",
      stderr: "reqwatch: error: --hung-after is renamed --processing-stuck-after: use --processing-stuck-after instead.\n",
    });
    expect(runCli(["recover", "--hung-after"], { stateDir })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--hung-after is renamed --processing-stuck-after"),
    });
    const byVariable = runCli(["recover", "--json"], { stateDir, env: { ...process.env, REQWATCH_HUNG_AFTER: "20m" } });
    expect(byVariable).toEqual({
      code: 2,
      stdout: "",
      stderr: "reqwatch: error: REQWATCH_HUNG_AFTER is renamed REQWATCH_PROCESSING_STUCK_AFTER: set REQWATCH_PROCESSING_STUCK_AFTER instead.\n",
    });
    expect(fs.readFileSync(requestPath(stateDir, "half-hour"), "utf8")).toBe(before);
    const dashboard = runCli(["dashboard", "--check"], { stateDir, env: { ...process.env, REQWATCH_HUNG_AFTER: "20m" } });
    expect(dashboard).toEqual({
      code: 2,
      stdout: "",
      stderr: "reqwatch: error: REQWATCH_HUNG_AFTER is renamed REQWATCH_PROCESSING_STUCK_AFTER: set REQWATCH_PROCESSING_STUCK_AFTER instead.\n",
    });
  });

  it("cleanup dry-runs with --dry-run, then archives; restore undoes it", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, anOldCompletedRequest("old"));
    runCli(["create", "-w", "gw", "--id", "fresh"], { stateDir });
    const dryRun = runCli(["cleanup", "--dry-run"], { stateDir });
    expect(dryRun.stdout).toMatch(/Would archive and delete 1 request\(s\) not updated for 1d \(1 completed\)/);
    expect(fs.existsSync(requestPath(stateDir, "old"))).toBe(true);

    const done = runCli(["cleanup", "--older-than", "24h"], { stateDir });
    expect(done.stdout).toMatch(/Archived and deleted 1 of 1 request/);
    expect(fs.existsSync(requestPath(stateDir, "old"))).toBe(false);

    expect(runCli(["restore", "old"], { stateDir })).toMatchObject({ code: 0, stdout: "Restored old (completed).\n" });
    expect(fs.existsSync(requestPath(stateDir, "old"))).toBe(true);
  });

  it("retry dry-runs with --dry-run, then requeues by id or by state", () => {
    const stateDir = tempStateDir();
    runCli(["create", "-w", "gw", "--id", "f1", "--state", "processing"], { stateDir });
    runCli(["update", "f1", "--state", "failed", "--error", "boom"], { stateDir });
    runCli(["create", "-w", "gw", "--id", "ok", "--state", "queued"], { stateDir });

    const dryRun = runCli(["retry", "--state", "failed", "--dry-run"], { stateDir });
    expect(dryRun).toMatchObject({ code: 0, stdout: "Would retry 1 of 1 request(s).\n  f1  failed -> queued  (manual retry of a failed request)\n" });
    expect(JSON.parse(readRaw(stateDir, "f1")).state).toBe("failed");

    const byId = runCli(["retry", "f1", "ok", "--json"], { stateDir });
    expect(JSON.parse(byId.stdout)).toMatchObject({
      matched: 2,
      retried: [{ requestId: "f1", from: "failed" }],
      skipped: [{ requestId: "ok", reason: "it is queued: nothing to retry" }],
    });
    expect(JSON.parse(readRaw(stateDir, "f1")).transitions.at(-1)).toMatchObject({ to: "queued", manual: true, by: "cli" });
    expect(runCli(["retry"], { stateDir })).toMatchObject({ code: 2, stderr: expect.stringContaining("A retry needs ids or a filter.") });
    runCli(["update", "f1", "--state", "failed"], { stateDir });
    const before = readRaw(stateDir, "f1");
    expect(runCli(["retry", "f1", "--workspace", "gw"], { stateDir })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("A retry takes ids or a filter, not both."),
    });
    expect(readRaw(stateDir, "f1")).toBe(before);
  });

  it("stops quietly, exit 0, when its reader stops early (reqwatch list | head -1)", async () => {
    const stateDir = tempStateDir();
    // More rows than a pipe holds, so the CLI is still writing when the reader goes.
    for (let i = 0; i < 1000; i++) writeRequestFile(stateDir, aRequest({ requestId: `r${String(i).padStart(4, "0")}`, prompt: "x".repeat(100) }));
    const child = spawn(process.execPath, [BIN, "list", "--limit", "1000", "--json"], { env: { ...process.env, REQWATCH_STATE_DIR: stateDir } });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });

  it("explain tells a request's story and what to do next, as text or --json; an unknown id fails with one line", () => {
    const stateDir = tempStateDir();
    runCli(["create", "-w", "gw", "--id", "f1", "--state", "processing"], { stateDir });
    runCli(["update", "f1", "--state", "failed", "--error", "boom"], { stateDir });

    const text = runCli(["explain", "f1"], { stateDir });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^f1 \(workspace gw\) is failed, since \S+ ago\.\n/);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toBe("Next: Retry it if the cause is fixed (manual retry of a failed request). Run: reqwatch retry f1");

    const json = JSON.parse(runCli(["explain", "f1", "--json"], { stateDir }).stdout);
    expect(json).toMatchObject({ requestId: "f1", state: "failed", next: { command: "reqwatch retry f1" } });

    const missing = runCli(["explain", "nope"], { stateDir });
    expect(missing).toMatchObject({ code: 1, stdout: "", stderr: "reqwatch: Request nope does not exist (it may have been cleaned up).\n" });
  });

  it("monitor --once runs one pass and reports what is stuck", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, {
      requestId: "waiting",
      workspace: "w",
      state: "queued",
      createdAt: Date.now() - 3_600_000,
      queuedAt: Date.now() - 3_600_000,
      lastUpdatedAt: Date.now() - 3_600_000,
    });
    const human = runCli(["monitor", "--once"], { stateDir });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/stuck 1 /);
    expect(human.stdout).toMatch(/ {2}waiting {2}queued 1h/);
    const { stdout } = runCli(["monitor", "--once", "--json"], { stateDir });
    // One JSON line, as every pass of a running monitor is.
    expect(stdout.split("\n")).toEqual([expect.stringMatching(/^\{.*\}$/), ""]);
    const json = JSON.parse(stdout);
    // "queued 1h", or "queued 1h 1s" when the runs take over a second.
    expect(json).toMatchObject({
      counts: { stuckQueued: 1 },
      stuck: [
        {
          requestId: "waiting",
          reason: expect.stringMatching(/^queued 1h( \d+s)?; no reqwatch worker has claimed from workspace w in 10m \(last claim: never\)$/),
        },
      ],
    });
  });

  it("monitor --once also runs the retention in a managed folder, on files written there by hand too: what is past it goes, audited, and REQWATCH_RETENTION=off keeps it", () => {
    const stateDir = tempStateDir();
    // The index exists before the files below are written into the folder by hand: the monitor catches up first.
    expect(runCli(["create", "-w", "w", "--id", "first"], { stateDir }).code).toBe(0);
    writeRequestFile(stateDir, anOldCompletedRequest("old"));
    writeRequestFile(stateDir, aRequest({ requestId: "new", state: "completed" }));
    const kept = runCli(["monitor", "--once"], { stateDir, env: { ...process.env, REQWATCH_RETENTION: "off" } });
    expect(kept.code).toBe(0);
    expect(kept.stdout).toMatch(/retention: requests kept \(REQWATCH_RETENTION=off\)/);
    expect(fs.existsSync(requestPath(stateDir, "old"))).toBe(true);

    const human = runCli(["monitor", "--once"], { stateDir });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /retention: removed 1 finished request\(s\) \(audit #\d+; `reqwatch restore <id>` or the audit page's undo brings them back\)/,
    );
    expect(fs.existsSync(requestPath(stateDir, "old"))).toBe(false);
    expect(fs.existsSync(requestPath(stateDir, "new"))).toBe(true);
    const json = JSON.parse(runCli(["monitor", "--once", "--json"], { stateDir }).stdout);
    expect(json.retention).toMatchObject({ removed: 0, entryId: null, error: null });
    expect(runCli(["restore", "old"], { stateDir }).code).toBe(0);
  });

  it("takes --state-dir over REQWATCH_STATE_DIR", () => {
    const fromEnv = tempStateDir();
    const fromFlag = tempStateDir();
    expect(runCli(["--state-dir", fromFlag, "create", "-w", "gw", "--id", "where"], { stateDir: fromEnv }).code).toBe(0);
    expect(fs.existsSync(requestPath(fromFlag, "where"))).toBe(true);
    expect(fs.existsSync(requestPath(fromEnv, "where"))).toBe(false);
  });

  describe("exit codes", () => {
    it("0 for --help, which lists every command on one line each, and for --version", () => {
      const help = runCli(["--help"]);
      expect(help.code).toBe(0);
      // The commands, up to the blank line before the environment's settings.
      const commands = help.stdout
        .slice(help.stdout.indexOf("Commands:\n") + "Commands:\n".length)
        .split("\n\n")[0]!
        .split("\n");
      expect(commands.map((line) => line.trim().split(" ")[0])).toEqual([
        "create",
        "update",
        "get",
        "explain",
        "list",
        "recover",
        "cleanup",
        "restore",
        "retry",
        "cancel",
        "queues",
        "pause",
        "resume",
        "monitor",
        "session",
        "source",
        "adopt",
        "dashboard",
        "usage",
        "otel",
        "mcp",
        "store",
        "help",
      ]);
      const version = runCli(["--version"]);
      expect(version).toMatchObject({ code: 0, stdout: `${JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../package.json"), "utf8")).version}\n` });
    });

    it.each([
      [["update", "nope", "--state", "queued"], /^reqwatch: Request nope does not exist\.\n$/],
      [["get", "../etc/passwd"], /^reqwatch: Invalid request id: "..\/etc\/passwd"/],
      [["create", "-w", "a/b"], /^reqwatch: Invalid workspace/],
      [["restore", "nothing"], /^reqwatch: Request nothing is not in the archive\.\n$/],
    ])("1 with one clear line on stderr: %j", (args, message) => {
      const result = runCli(args, { stateDir: tempStateDir() });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    });

    it("1 for a refused transition, naming both states", () => {
      const stateDir = tempStateDir();
      runCli(["create", "-w", "gw", "--id", "t"], { stateDir });
      const result = runCli(["update", "t", "--state", "completed"], { stateDir });
      expect(result).toMatchObject({ code: 1, stderr: "reqwatch: Request t cannot move from 'created' to 'completed'.\n" });
    });

    it.each([
      [["frobnicate"]],
      [["create"]],
      [["update"]],
      [["update", "x", "--state", "done"]],
      [["update", "x", "--tokens", "many"]],
      [["list", "--state", "bogus"]],
      [["cleanup", "--older-than", "soon"]],
      [["list", "--no-such-flag"]],
    ])("2 for a usage error: %j", (args) => {
      const stateDir = tempStateDir();
      const before = fs.readdirSync(stateDir);
      const result = runCli(args, { stateDir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/error:/);
      expect(fs.readdirSync(stateDir)).toEqual(before);
    });
  });

  describe("bad input: one line naming the value and what is accepted, exit 2, nothing changed", () => {
    const oneLine = (stderr: string) => expect(stderr.trim().split("\n")).toHaveLength(1);

    it("--set with a value that is not JSON", () => {
      const stateDir = tempStateDir();
      const before = treeSnapshot(stateDir);
      const result = runCli(["create", "-w", "gw", "--id", "typo", "--set", "foo={bad json"], { stateDir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/is invalid\. The value of foo is not JSON: \{bad json\. Use, for example, foo=3/);
      oneLine(result.stderr);
      expect(treeSnapshot(stateDir)).toEqual(before);
    });

    it("a duration without its unit", () => {
      const stateDir = tempStateDir();
      writeRequestFile(stateDir, anOldCompletedRequest("old"));
      const before = treeSnapshot(stateDir);
      const result = runCli(["cleanup", "--older-than", "5"], { stateDir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/Invalid duration: "5"\. A number needs its unit\. Use a number with a unit: 250ms, 30s, 15m, 1h, 7d or 2w\./);
      oneLine(result.stderr);
      expect(treeSnapshot(stateDir)).toEqual(before);
    });

    it("an interval of 0 (a monitor pass in a busy loop), by flag or by variable, and a 0 processing stuck threshold", () => {
      const stateDir = tempStateDir();
      writeRequestFile(stateDir, anOldCompletedRequest("old"));
      const before = treeSnapshot(stateDir);
      const flag = runCli(["monitor", "--once", "--interval", "0s"], { stateDir });
      expect(flag.code).toBe(2);
      expect(flag.stderr).toMatch(/option '--interval <duration>' argument '0s' is invalid\. It must be longer than 0\./);
      oneLine(flag.stderr);
      // A setting in the environment is given to the command as a flag is: a wrong one is a usage error too.
      const variable = runCli(["monitor", "--once"], { stateDir, env: { ...process.env, REQWATCH_MONITOR_INTERVAL: "0s" } });
      expect(variable.code).toBe(2);
      expect(variable.stderr).toMatch(/^reqwatch: error: Invalid REQWATCH_MONITOR_INTERVAL: "0s"\. It must be longer than 0\./);
      oneLine(variable.stderr);
      // Not "every finished request is past its retention": `off` turns it off.
      const retention = runCli(["monitor", "--once"], { stateDir, env: { ...process.env, REQWATCH_RETENTION: "0ms" } });
      expect(retention).toMatchObject({ code: 2, stderr: expect.stringMatching(/Invalid REQWATCH_RETENTION: "0ms"\. It must be longer than 0\./) });
      expect(runCli(["recover", "--processing-stuck-after", "0m"], { stateDir }).code).toBe(2);
      expect(treeSnapshot(stateDir)).toEqual(before);
    });

    it("a time that is not one: the message shows the forms the README writes (1h)", () => {
      const result = runCli(["list", "--updated-since", "yesterday"], { stateDir: tempStateDir() });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/"yesterday" is not a time\. Use a duration ago such as 1h or 7d, an ISO date/);
      expect(result.stderr).not.toMatch(/\+DURATION/);
      oneLine(result.stderr);
      // A number without its unit is not taken as 5 ms after 1970 (which would list everything).
      const stateDir = tempStateDir();
      for (const args of [
        ["list", "--updated-since", "5"],
        ["create", "--timeout-at", "30"],
      ]) {
        const unitless = runCli(args, { stateDir });
        expect(unitless.code, args.join(" ")).toBe(2);
        expect(unitless.stderr).toMatch(/is not a time \(a duration needs its unit, such as 5m; epoch milliseconds have 13 digits\)/);
        oneLine(unitless.stderr);
      }
      expect(runCli(["list", "--updated-since", String(Date.now() - 60_000)], { stateDir }).code).toBe(0);
    });

    it("a mistyped --state-dir on a read: says it does not exist, and creates nothing", () => {
      const parent = tempParent();
      const missing = path.join(parent, "sate");
      for (const args of [["list"], ["get", "x"], ["session", "list"], ["monitor", "--once"], ["cleanup", "--dry-run"]]) {
        const result = runCli(["--state-dir", missing, ...args]);
        expect(result.code, args.join(" ")).toBe(2);
        expect(result.stderr).toBe(
          `reqwatch: error: The state directory ${missing} does not exist. Check --state-dir (or REQWATCH_STATE_DIR); only \`create\` and the \`session\` commands that record make a new state directory.\n`,
        );
      }
      expect(fs.readdirSync(parent)).toEqual([]);
    });

    it("npm start with a state directory that does not exist: says so, builds nothing, creates nothing", () => {
      const missing = path.join(tempParent(), "typo");
      const result = spawnSync(process.execPath, [path.resolve(__dirname, "../../scripts/start.mjs"), "--state-dir", missing, "--port", "1"], {
        encoding: "utf8",
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^reqwatch: error: the state directory ${missing} does not exist\\.`));
      expect(fs.existsSync(missing)).toBe(false);
      // The same from the command a project that installed reqwatch runs.
      const dashboard = runCli(["--state-dir", missing, "dashboard", "--port", "1"]);
      expect(dashboard.code).toBe(2);
      expect(dashboard.stderr).toBe(
        `reqwatch: error: the state directory ${missing} does not exist. Check --state-dir (or REQWATCH_STATE_DIR); to start a new one there, run \`mkdir -p ${missing} && npx reqwatch adopt --state-dir ${missing}\`.\n`,
      );
      expect(fs.existsSync(missing)).toBe(false);
    });

    it("a state directory that is a file", () => {
      const file = path.join(tempParent(), "state");
      fs.writeFileSync(file, "not a folder");
      for (const args of [["list"], ["create", "-w", "gw"]]) {
        const result = runCli(args, { env: { ...process.env, REQWATCH_STATE_DIR: file } });
        expect(result.code, args.join(" ")).toBe(2);
        expect(result.stderr).toBe(`reqwatch: error: The state directory ${file} is not a directory.\n`);
      }
      const below = runCli(["--state-dir", path.join(file, "below"), "list"]);
      expect(below).toMatchObject({
        code: 2,
        stderr: `reqwatch: error: Cannot use the state directory ${path.join(file, "below")}: ${file} is a file, not a folder.\n`,
      });
      expect(fs.readFileSync(file, "utf8")).toBe("not a folder");
    });

    it("a page size out of range; every usage error starts with the command's name", () => {
      for (const limit of ["0", "-3", "1001"]) {
        const result = runCli(["list", "--limit", limit], { stateDir: tempStateDir() });
        expect(result.code).toBe(2);
        expect(result.stderr).toMatch(new RegExp(`^reqwatch: error: option '-n, --limit <n>' argument '${limit}' is invalid\\. .* use 1 to 1000\\.\\n$`));
      }
      expect(runCli(["frobnicate"]).stderr).toBe("reqwatch: error: unknown command 'frobnicate'\n");
    });

    it("--version prints the package's version; --help lists every command", () => {
      const version = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../package.json"), "utf8")).version;
      expect(runCli(["--version"])).toMatchObject({ code: 0, stdout: `${version}\n` });
      const help = runCli(["--help"]).stdout;
      for (const command of ["create", "update", "get", "list", "recover", "cleanup", "restore", "retry", "monitor", "session", "adopt"])
        expect(help).toMatch(new RegExp(`\\n  ${command}\\b`));
    });
  });

  describe("a folder another program writes", () => {
    it("reads a gateway's response files from the folder REQWATCH_IPC_DIR names, and forgets them once no folder is named", () => {
      const gateway = makeGatewayFolder(tempParent(), { count: 40, stuckProcessing: 1 });
      const elsewhere = path.join(tempParent(), "responses-here");
      fs.renameSync(gateway.ipc, elsewhere);
      const before = treeSnapshot(gateway.data);
      // The last response file is a stop hook cut short: unreadable, so not counted as a failed callback.
      const failed = gateway.responses
        .filter((r) => !r.callback.success && r !== gateway.responses.at(-1))
        .map((r) => r.requestId)
        .sort();
      expect(failed.length).toBeGreaterThan(0);
      const listFailed = (env: NodeJS.ProcessEnv) =>
        (
          JSON.parse(runCli(["list", "--callback-failed", "--json", "--limit", "1000"], { stateDir: gateway.state, env }).stdout) as {
            items: { requestId: string }[];
          }
        ).items
          .map((r) => r.requestId)
          .sort();
      expect(listFailed({ ...process.env, REQWATCH_IPC_DIR: elsewhere })).toEqual(failed);
      expect(listFailed(process.env)).toEqual([]);
      expect(treeSnapshot(gateway.data)).toEqual(before);
    });

    it("keeps its index under $XDG_CACHE_HOME/reqwatch, else ~/.cache/reqwatch, when REQWATCH_CACHE_DIR is not set", () => {
      const stateDir = tempForeignDir();
      writeRequestFile(stateDir, aRequest({ requestId: "theirs", state: "queued" }));
      const before = treeSnapshot(stateDir);
      const xdg = path.join(tempParent(), "xdg");
      const home = tempParent();
      expect(runCli(["list"], { stateDir, env: { ...process.env, REQWATCH_CACHE_DIR: "", XDG_CACHE_HOME: xdg } }).stdout).toMatch(/theirs/);
      expect(runCli(["list"], { stateDir, env: { ...process.env, REQWATCH_CACHE_DIR: "", XDG_CACHE_HOME: "", HOME: home } }).stdout).toMatch(/theirs/);
      for (const cache of [path.join(xdg, "reqwatch"), path.join(home, ".cache", "reqwatch")]) {
        const [folder, ...others] = fs.readdirSync(path.join(cache, "observed"));
        expect(others).toEqual([]);
        expect(fs.existsSync(path.join(cache, "observed", folder!, "index.db"))).toBe(true);
      }
      expect(treeSnapshot(stateDir)).toEqual(before);
    });

    it("is read as its files are now: what the program changed, added or removed since the last command shows at once", () => {
      const stateDir = tempForeignDir();
      const now = Date.now();
      writeRequestFile(stateDir, aRequest({ requestId: "changes", state: "queued" }, now));
      writeRequestFile(stateDir, aRequest({ requestId: "goes", state: "queued" }, now));
      expect(runCli(["list"], { stateDir }).stdout).toMatch(/changes +ws +queued/);
      // The program moves one on (same version, as a gateway that keeps none writes it), adds one, removes one.
      writeRequestFile(stateDir, aRequest({ requestId: "changes", state: "failed", error: "upstream 502", completedAt: now }, now));
      writeRequestFile(stateDir, aRequest({ requestId: "arrived", workspace: "late", state: "queued" }, now));
      fs.rmSync(path.join(stateDir, "requests", "goes.json"));
      const before = treeSnapshot(stateDir);
      expect(JSON.parse(runCli(["get", "changes"], { stateDir }).stdout)).toMatchObject({ state: "failed", error: "upstream 502" });
      expect(runCli(["explain", "arrived"], { stateDir }).stdout).toMatch(/^arrived \(workspace late\) is queued/);
      const listed = runCli(["list"], { stateDir }).stdout;
      expect(listed).toMatch(/changes +ws +failed/);
      expect(listed).toMatch(/arrived +late +queued/);
      expect(listed).not.toMatch(/goes/);
      expect(runCli(["queues"], { stateDir }).stdout).toMatch(/late/);
      expect(treeSnapshot(stateDir)).toEqual(before);
    });

    it("and in a folder reqwatch manages, a file edited by hand shows as it now is, with no recover first", () => {
      const stateDir = tempStateDir();
      expect(runCli(["create", "--id", "edited", "-w", "ws"], { stateDir }).code).toBe(0);
      const file = path.join(stateDir, "requests", "edited.json");
      const request = JSON.parse(fs.readFileSync(file, "utf8"));
      fs.writeFileSync(file, JSON.stringify({ ...request, model: "edited-by-hand", lastUpdatedAt: request.lastUpdatedAt - 3 * 24 * 3_600_000 }));
      expect(JSON.parse(runCli(["get", "edited"], { stateDir }).stdout)).toMatchObject({ model: "edited-by-hand", version: request.version });
      expect(runCli(["list", "--updated-since", "1h"], { stateDir }).stdout).toBe("No requests match.\n");
    });

    it("is read by the reading commands and refused to the writing ones, byte for byte unchanged; adopt lets reqwatch write", () => {
      const stateDir = tempForeignDir();
      writeRequestFile(stateDir, aRequest({ requestId: "theirs", state: "processing", processingStartedAt: Date.now() - 3 * 60 * 60 * 1000 }));
      const before = treeSnapshot(stateDir);

      expect(runCli(["list"], { stateDir }).stdout).toMatch(/theirs +ws +processing/);
      expect(JSON.parse(runCli(["get", "theirs"], { stateDir }).stdout)).toMatchObject({ requestId: "theirs" });
      const stuck = JSON.parse(runCli(["monitor", "--once", "--json"], { stateDir }).stdout);
      // "processing 3h", or "3h 1s" when the commands before took over a second.
      expect(stuck.stuck[0].reason).toMatch(/^processing 3h(?: \d+s)?; no reqwatch worker holds it \(written by another program\)$/);
      const dryRun = runCli(["retry", "theirs", "--dry-run"], { stateDir });
      expect(dryRun.code).toBe(0);
      // A dry run here says the run itself would be refused.
      expect(dryRun.stdout).toMatch(
        /Note: this folder is observed read-only \(.*\): the run itself would be refused\. To let reqwatch write there, run `reqwatch adopt/,
      );
      for (const args of [
        ["create", "-w", "gw"],
        ["update", "theirs", "--state", "failed"],
        ["recover"],
        ["retry", "theirs"],
        ["cleanup"],
        ["session", "start"],
      ]) {
        const result = runCli(args, { stateDir });
        expect(result.code, args.join(" ")).toBe(1);
        expect(result.stderr).toMatch(
          new RegExp(
            `is refused: ${stateDir} is observed read-only \\(reqwatch did not create this folder: it holds files and no reqwatch marker \\(reqwatch.json\\)\\)\\. Nothing was changed\\. To let reqwatch write there, run \`reqwatch adopt --state-dir ${stateDir}\`\\.`,
          ),
        );
      }
      expect(treeSnapshot(stateDir)).toEqual(before);

      expect(runCli(["adopt"], { stateDir }).code).toBe(0);
      expect(runCli(["update", "theirs", "--state", "failed", "--error", "given up"], { stateDir }).code).toBe(0);
      expect(JSON.parse(readRaw(stateDir, "theirs"))).toMatchObject({ state: "failed", error: "given up" });
    });
  });
});
