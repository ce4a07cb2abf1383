import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { addMessage, claudeMemWithOneOfEach, createClaudeMemDb } from "../helpers/claudeMemDb";
import { eventually } from "../helpers/processes";
import { aRecording, tempParent } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";
import { LiveSource } from "../../lib/sources/liveSource";
import { actOnSource } from "../../lib/dashboard/sourceActions";
import { parseSourceActionInput, sourceAction } from "../../lib/sources/sourceActions";

const MIN = 60_000;
const HOUR = 60 * MIN;
const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
const row = (db: Database.Database, id: number) => db.prepare("SELECT * FROM pending_messages WHERE id = ?").get(id) as Record<string, unknown> | undefined;

/** Another process that keeps writing to the database (a message every few ms) until told to stop; resolves with how many it wrote. */
function aBusyOwner(file: string) {
  const script = `
    const Database = require(${JSON.stringify(require.resolve("better-sqlite3"))});
    const db = new Database(${JSON.stringify(file)}, { timeout: 5000 });
    const insert = db.prepare("INSERT INTO pending_messages (session_db_id, content_session_id, message_type, status, created_at_epoch) VALUES (1, 'sess-1', 'observation', 'pending', ?)");
    let n = 0;
    const timer = setInterval(() => { insert.run(Date.now()); n++; if (n === 1) process.stdout.write("writing\\n"); }, 3);
    process.stdin.on("data", () => { clearInterval(timer); db.close(); process.stdout.write(String(n) + "\\n"); process.exit(0); });`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  const started = new Promise<void>((resolve) => child.stdout.on("data", (chunk) => ((out += chunk), out.includes("writing") && resolve())));
  const stop = () =>
    new Promise<number>((resolve) => {
      child.on("exit", () => resolve(Number(out.trim().split("\n").at(-1))));
      child.stdin.write("stop\n");
    });
  return { started, stop };
}

describe("acting on claude-mem's queue where its own recovery does the same", () => {
  it("a retry while claude-mem writes: stuck and failed messages back to pending with its own statement, the rest skipped, every write of the owner kept", async () => {
    const file = path.join(tempParent(), "claude-mem.db");
    const { db, ids } = claudeMemWithOneOfEach(file);
    const owner = aBusyOwner(file);
    await owner.started;
    // The owner's rows: each wait below sees it write more, so the actions run between its writes whatever the machine's pace.
    const ownerRows = () => db.prepare("SELECT count(*) FROM pending_messages WHERE tool_name IS NULL").pluck().get() as number;
    const moreWrites = async (more = 1) => {
      const seen = ownerRows();
      await eventually(() => (ownerRows() >= seen + more ? true : undefined));
    };
    await moreWrites(5);
    const asked = [ids.crashed, ids.failed, ids.running, ids.waiting, ids.done].map((id) => `claude-mem-${id}`).concat("claude-mem-999999");

    const dry = sourceAction({ kind: "claude-mem", file }, "retry", asked, { dryRun: true });
    expect(dry.changed).toEqual([`claude-mem-${ids.crashed}`, `claude-mem-${ids.failed}`]);
    expect(row(db, ids.crashed)).toMatchObject({ status: "processing" });

    await moreWrites(5);
    const done = sourceAction({ kind: "claude-mem", file }, "retry", asked, { dryRun: false });
    await moreWrites(5);
    const written = await owner.stop();
    // v12.4.5-v12.4.9 clears the worker pid (and an older column that marks processing, where the file kept it).
    expect(done.sql).toBe("UPDATE pending_messages SET status = 'pending', started_processing_at_epoch = NULL, worker_pid = NULL WHERE id = ? AND status = ?");
    expect(done.changed).toEqual([`claude-mem-${ids.crashed}`, `claude-mem-${ids.failed}`]);
    expect(done.skipped).toEqual([
      { reason: "processing, not stuck: its worker may still finish it", count: 1, ids: [`claude-mem-${ids.running}`] },
      { reason: "pending already", count: 1, ids: [`claude-mem-${ids.waiting}`] },
      { reason: "completed: only a stuck or failed message goes back to pending", count: 1, ids: [`claude-mem-${ids.done}`] },
      { reason: "not in the table (deleted, or not claude-mem's)", count: 1, ids: ["claude-mem-999999"] },
    ]);
    expect(row(db, ids.crashed)).toMatchObject({ status: "pending", worker_pid: null, started_processing_at_epoch: null, retry_count: 0 });
    expect(row(db, ids.failed)).toMatchObject({ status: "pending", retry_count: 3 });
    expect(row(db, ids.running)).toMatchObject({ status: "processing", worker_pid: process.pid });
    expect(written).toBeGreaterThanOrEqual(15);
    expect(db.prepare("SELECT count(*) FROM pending_messages WHERE tool_name IS NULL").pluck().get()).toBe(written);
    db.close();
  });

  it("a dry run changes nothing; each generation gets its own statement", () => {
    for (const [g, sql] of [
      ["g3", "UPDATE pending_messages SET status = 'pending', started_processing_at_epoch = NULL WHERE id = ? AND status = ?"],
      ["g7", "UPDATE pending_messages SET status = 'pending' WHERE id = ? AND status = ?"],
    ] as const) {
      const file = path.join(tempParent(), "claude-mem.db");
      const db = createClaudeMemDb(file, g);
      const id = addMessage(db, { status: "processing", createdAt: Date.now() - 20 * MIN, startedAt: Date.now() - 10 * MIN });
      db.close();
      const before = sha256(file);
      expect(sourceAction({ kind: "claude-mem", file }, "retry", [`claude-mem-${id}`], { dryRun: true })).toMatchObject({ sql, changed: [`claude-mem-${id}`] });
      expect(sha256(file)).toBe(before);
      expect(sourceAction({ kind: "claude-mem", file }, "retry", [`claude-mem-${id}`], { dryRun: false }).changed).toEqual([`claude-mem-${id}`]);
      const after = new Database(file, { readonly: true });
      expect(row(after, id)).toMatchObject({ status: "pending" });
      after.close();
    }
  });

  it("left-overs of a table claude-mem no longer reads are deleted, never retried; a table it works through is never deleted from", () => {
    const file = path.join(tempParent(), "claude-mem.db");
    const db = createClaudeMemDb(file, "g8");
    const old = Date.now() - 3 * HOUR;
    const left = addMessage(db, { status: "processing", createdAt: old, startedAt: old });
    const waiting = addMessage(db, { status: "pending", createdAt: old });
    expect(thrown(() => sourceAction({ kind: "claude-mem", file }, "retry", [`claude-mem-${left}`], { dryRun: true }))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("a retry would put messages in a queue nobody reads"),
    });
    const gone = sourceAction({ kind: "claude-mem", file }, "delete", [`claude-mem-${left}`, `claude-mem-${waiting}`], { dryRun: false });
    expect(gone).toMatchObject({
      sql: "DELETE FROM pending_messages WHERE id = ? AND status = ?",
      changed: [`claude-mem-${left}`, `claude-mem-${waiting}`],
      skipped: [],
    });
    expect(db.prepare("SELECT count(*) FROM pending_messages").pluck().get()).toBe(0);
    db.close();

    const live = path.join(tempParent(), "claude-mem.db");
    const g6 = createClaudeMemDb(live, "g6");
    const stuck = addMessage(g6, { status: "processing", createdAt: old, startedAt: old });
    g6.close();
    expect(thrown(() => sourceAction({ kind: "claude-mem", file: live }, "delete", [`claude-mem-${stuck}`], { dryRun: false }))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("deleting a message would lose its observation"),
    });
    expect(thrown(() => sourceAction({ kind: "sqlite", mapping: "/x.json" }, "retry", ["jobs-1"], { dryRun: false }))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("a mapped table is read only"),
    });
    expect(thrown(() => sourceAction({ kind: "claude-mem", file: live }, "retry", [], { dryRun: false }))).toMatchObject({ code: "BAD_INPUT" });
    // The dashboard acts only on a source opened for writing, and checks what it is asked.
    const actions = {
      recordSourceAction: () => {
        throw new Error("not to be called");
      },
    };
    expect(
      thrown(() =>
        actOnSource(
          new LiveSource("claude-mem", { kind: "claude-mem", file: live }),
          actions,
          { kind: "retry", ids: [`claude-mem-${stuck}`], dryRun: false },
          "test",
        ),
      ),
    ).toMatchObject({
      code: "FORBIDDEN",
      message: `claude-mem is read only: to allow retrying and deleting where claude-mem's own recovery does the same, start the dashboard with --source 'claude-mem:${live}?write=1'.`,
    });
    expect(parseSourceActionInput({ kind: "retry", ids: ["claude-mem-1"] })).toEqual({ kind: "retry", ids: ["claude-mem-1"], dryRun: true });
    expect(thrown(() => parseSourceActionInput({ kind: "drop", ids: [] }))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/^Invalid action: /),
    });
  });

  it("a database its owner keeps locked: said, and nothing changed; the audit log says what was asked and how it ended", () => {
    const file = path.join(tempParent(), "claude-mem.db");
    const { db, ids } = claudeMemWithOneOfEach(file);
    db.exec("BEGIN IMMEDIATE");
    const { tracker, operator } = aRecording();
    try {
      const started = Date.now();
      expect(
        thrown(() =>
          operator.actions.recordSourceAction({ name: "claude-mem", file }, "retry", [`claude-mem-${ids.crashed}`], "test", () =>
            sourceAction({ kind: "claude-mem", file }, "retry", [`claude-mem-${ids.crashed}`], { dryRun: false }),
          ),
        ),
      ).toMatchObject({ code: "LOCKED", message: expect.stringContaining("is locked by its owner") });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      db.exec("COMMIT");
      expect(row(db, ids.crashed)).toMatchObject({ status: "processing" });
      const { entry } = operator.actions.recordSourceAction({ name: "claude-mem", file }, "retry", [`claude-mem-${ids.crashed}`], "test", () =>
        sourceAction({ kind: "claude-mem", file }, "retry", [`claude-mem-${ids.crashed}`], { dryRun: false }),
      );
      expect(entry).toMatchObject({
        kind: "source-retry",
        by: "test",
        status: "done",
        matched: 1,
        changed: 1,
        changedIds: [`claude-mem-${ids.crashed}`],
        summary: `Retry claude-mem-${ids.crashed} of claude-mem (${file})`,
      });
      const [latest, failed] = operator.actions.list();
      expect(latest!.id).toBe(entry.id);
      expect(failed).toMatchObject({ kind: "source-retry", status: "failed", changed: 0, error: expect.stringContaining("is locked by its owner") });
    } finally {
      tracker.close();
      db.close();
    }
  });
});
