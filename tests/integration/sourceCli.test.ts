import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { addMessage, createClaudeMemDb } from "../helpers/claudeMemDb";
import { runCli } from "../helpers/cli";
import { aDeadPid } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";

const MIN = 60_000;

describe("reqwatch source: another program's queue, read-only", () => {
  it("says what is stuck in a claude-mem database and why, and changes none of it", () => {
    const dir = tempParent();
    const file = path.join(dir, "claude-mem.db");
    const db = createClaudeMemDb(file, "g6");
    const now = Date.now();
    const dead = aDeadPid();
    const hung = addMessage(db, { status: "processing", createdAt: now - 20 * MIN, startedAt: now - 15 * MIN, project: "site" });
    const orphan = addMessage(db, { status: "processing", createdAt: now - 2 * MIN, startedAt: now - MIN, workerPid: dead });
    addMessage(db, { status: "processing", createdAt: now - MIN, startedAt: now - 30_000, workerPid: process.pid });
    addMessage(db, { status: "failed", createdAt: now - 60 * MIN, finishedAt: now - 59 * MIN, retries: 3 });
    db.close();
    const hash = () => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    const before = hash();

    // Relative to where it is typed, as a path on a command line is.
    const text = runCli(["source", `claude-mem:${path.relative(process.cwd(), file)}`]);
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`claude-mem: ${file}, table pending_messages, read-only`);
    expect(text.stdout).toContain("schema: g6 (v12.4.5-v12.4.9)");
    expect(text.stdout).toContain("messages: 4 (3 processing, 1 failed); stuck: 2");
    // The CLI reads the clock when it runs: seconds may have passed since the rows were written.
    expect(text.stdout).toMatch(new RegExp(`claude-mem-${hung} +site +processing .*processing 15m( \\d+s)?, past claude-mem's own 5m stuck limit`));
    expect(text.stdout).toMatch(new RegExp(`claude-mem-${orphan} .*claude-mem worker pid ${dead} is gone`));

    const json = runCli(["source", `claude-mem:${file}`, "--all", "--json"]);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as {
      counts: Record<string, number>;
      stuck: number;
      messages: { requestId: string; stuckReason: string | null; note: string | null }[];
    };
    expect(body.counts).toMatchObject({ processing: 3, failed: 1 });
    expect(body.stuck).toBe(2);
    expect(body.messages.find((message) => message.note)?.note).toBe("failed after 3 retries, claude-mem's limit");
    // What a page leaves out is said, never dropped silently.
    expect(JSON.parse(runCli(["source", `claude-mem:${file}`, "--all", "--json", "--limit", "1"]).stdout)).toMatchObject({
      total: 4,
      more: 3,
      messages: [expect.anything()],
    });
    expect(hash()).toBe(before);
  });

  it("wrong input: a usage error for what is not a source, a clear error for a file that is not one", () => {
    const dir = tempParent();
    expect(runCli(["source", "postgres:db"])).toMatchObject({ code: 2, stderr: expect.stringContaining('Unknown source "postgres:db": use claude-mem') });
    expect(runCli(["source", "claude-mem:"])).toMatchObject({ code: 2, stderr: expect.stringContaining("names no file") });
    expect(runCli(["source", `claude-mem:${path.join(dir, "missing.db")}`])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^reqwatch: claude-mem source: .*missing\.db does not exist\.\n$/),
    });
    const notes = path.join(dir, "notes.txt");
    fs.writeFileSync(notes, "hello\n");
    expect(runCli(["source", `claude-mem:${notes}`])).toMatchObject({ code: 1, stderr: expect.stringContaining("is not an SQLite database") });
    expect(fs.readFileSync(notes, "utf8")).toBe("hello\n");
    // Without a path: claude-mem's own place in the home folder.
    expect(runCli(["source"], { env: { ...process.env, HOME: dir } })).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`${path.join(dir, ".claude-mem", "claude-mem.db")} does not exist`),
    });
  });

  it("list --source: a source's rows with the list's filters and pages, and what does not fit a source refused", () => {
    const dir = tempParent();
    const file = path.join(dir, "claude-mem.db");
    const db = createClaudeMemDb(file, "g3");
    const now = Date.now();
    const ids = [0, 1, 2, 3].map((i) =>
      addMessage(db, {
        status: i === 0 ? "processing" : "processed",
        createdAt: now - (10 - i) * MIN,
        startedAt: now - (9 - i) * MIN,
        finishedAt: i ? now - (8 - i) * MIN : undefined,
        project: i % 2 ? "api" : "web",
        session: `sess-${i % 2}`,
      }),
    );
    db.close();
    const hash = crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

    const text = runCli(["list", "--source", `claude-mem:${file}`, "--state", "processing"]);
    expect(text).toMatchObject({ code: 0, stderr: "" });
    expect(text.stdout).toMatch(new RegExp(`claude-mem-${ids[0]} +web +processing .*stuck: processing 9m( \\d+s)?, past claude-mem's own 5m stuck limit`));
    const first = JSON.parse(runCli(["list", "--source", `claude-mem:${file}`, "-w", "api", "-n", "1", "--json"]).stdout) as {
      items: { requestId: string; source: string }[];
      nextCursor: string;
    };
    expect(first.items).toEqual([expect.objectContaining({ requestId: `claude-mem-${ids[3]}`, source: "claude-mem" })]);
    const second = JSON.parse(runCli(["list", "--source", `claude-mem:${file}`, "-w", "api", "-n", "1", "--json", "--cursor", first.nextCursor]).stdout) as {
      items: { requestId: string }[];
      nextCursor: string | null;
    };
    expect(second).toEqual({ items: [expect.objectContaining({ requestId: `claude-mem-${ids[1]}` })], nextCursor: null });
    expect(runCli(["list", "--source", `claude-mem:${file}`, "--callback-failed", "--sort", "createdAt"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--callback-failed, --sort are not for a source"),
    });
    expect(runCli(["list", "--source", "claude-mem:"])).toMatchObject({ code: 2, stderr: expect.stringContaining("names no file") });
    expect(runCli(["list", "--source", `claude-mem:${path.join(dir, "gone.db")}`])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("gone.db does not exist"),
    });
    expect(crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")).toBe(hash);
  });
});
