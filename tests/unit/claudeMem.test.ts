import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { addMessage, createClaudeMemDb, GENERATIONS, migrateClaudeMemDb, upgradedClaudeMemDb, type Generation } from "../helpers/claudeMemDb";
import { aDeadPid } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { inspectClaudeMem } from "../../lib/sources/claudeMem";
import { thrown } from "../helpers/thrown";

const MIN = 60_000;
const now = Date.now();

function dbFile(): string {
  return path.join(tempParent(), "claude-mem.db");
}

const LABEL: Record<Generation, string> = {
  g1: "g1 (v7.3.1-v8.2.5)",
  g2: "g2 (v8.2.6-v8.5.4)",
  g3: "g3 (v8.5.5-v12.2.1)",
  g4: "g4 (v12.2.2-v12.3.9)",
  g5: "g5 (v12.4.0-v12.4.4)",
  g6: "g6 (v12.4.5-v12.4.9)",
  g7: "g7 (v12.5.0-v13.9.0)",
  g8: "g8 (v13.9.1 onward)",
};

describe("claude-mem's queue, every generation", () => {
  for (const g of GENERATIONS) {
    it(`${g}: tells the generation, maps statuses to states, and says what is stuck by claude-mem's rules`, () => {
      const file = dbFile();
      const db = createClaudeMemDb(file, g);
      const retired = g === "g7" || g === "g8";
      const started = g !== "g5" && !retired;
      // A message running for 10 minutes, one for 1 minute, one waiting; older generations keep finished ones too.
      const long = addMessage(db, { status: "processing", createdAt: now - 11 * MIN, startedAt: now - 10 * MIN, project: "web app" });
      const short = addMessage(db, { status: "processing", createdAt: now - 2 * MIN, startedAt: now - MIN, workerPid: process.pid });
      addMessage(db, { status: "pending", createdAt: now - MIN, session: "sess-2" });
      if (!retired) {
        addMessage(db, {
          status: "processed",
          createdAt: now - 30 * MIN,
          startedAt: now - 29 * MIN,
          finishedAt: now - 28 * MIN,
          response: "observed: tests pass",
        });
        addMessage(db, { status: "failed", createdAt: now - 40 * MIN, startedAt: now - 39 * MIN, finishedAt: now - 38 * MIN, retries: 3 });
      }
      db.close();

      const { shape, messages } = inspectClaudeMem(file, now);
      expect(shape.generation).toBe(LABEL[g]);
      expect(shape.retired).toBe(retired);
      const byId = new Map(messages.map((message) => [message.request.requestId, message]));
      const counts: Record<string, number> = {};
      for (const { request } of messages) counts[request.state] = (counts[request.state] ?? 0) + 1;
      expect(counts).toEqual(retired ? { processing: 2, queued: 1 } : { processing: 2, queued: 1, completed: 1, failed: 1 });

      const stuck = byId.get(`claude-mem-${long}`)!;
      expect(stuck.request).toMatchObject({ workspace: "web_app", sessionId: "sess-1", prompt: 'observation Bash: {"command":"npm test"}' });
      expect(stuck.stuck).toBe(
        started
          ? "processing 10m, past claude-mem's own 5m stuck limit"
          : "processing 11m since it was created (claude-mem did not record when processing started), past claude-mem's own 5m stuck limit",
      );
      expect(byId.get(`claude-mem-${short}`)!.stuck).toBeNull();
      if (!retired) {
        const failed = messages.find((message) => message.request.state === "failed")!;
        expect(failed.note).toBe("failed after 3 retries, claude-mem's limit");
        expect(failed.request.attempt).toBe(4);
        expect(messages.find((message) => message.request.state === "completed")!.request).toMatchObject({
          output: "observed: tests pass",
          completedAt: now - 28 * MIN,
        });
      }
    });
  }

  it("g6: a processing message whose worker pid is gone is stuck at once", () => {
    const file = dbFile();
    const db = createClaudeMemDb(file, "g6");
    const dead = aDeadPid();
    const id = addMessage(db, { status: "processing", createdAt: now - 2 * MIN, startedAt: now - MIN, workerPid: dead });
    db.close();
    expect(inspectClaudeMem(file, now).messages.find((message) => message.request.requestId === `claude-mem-${id}`)!.stuck).toBe(
      `processing 1m; claude-mem worker pid ${dead} is gone`,
    );
  });

  it("g6: a message whose worker runs is not stuck however long it has run: claude-mem's own rule there is the worker, not the time", () => {
    const file = dbFile();
    const db = createClaudeMemDb(file, "g6");
    const id = addMessage(db, { status: "processing", createdAt: now - 30 * MIN, startedAt: now - 20 * MIN, workerPid: process.pid });
    db.close();
    expect(inspectClaudeMem(file, now).messages.find((message) => message.request.requestId === `claude-mem-${id}`)).toMatchObject({
      stuck: null,
      note: `claude-mem worker pid ${process.pid} runs`,
    });
  });

  it("g7 and later: rows in a table nothing has written to for an hour are left over", () => {
    for (const g of ["g7", "g8"] as const) {
      const file = dbFile();
      const db = createClaudeMemDb(file, g);
      addMessage(db, { status: "pending", createdAt: now - 3 * 86_400_000 });
      addMessage(db, { status: "processing", createdAt: now - 2 * 86_400_000 });
      db.close();
      const { messages } = inspectClaudeMem(file, now);
      expect(messages.map((message) => message.stuck)).toEqual([
        "left over: claude-mem from v13.4.0 keeps its queue in memory and no longer processes this table (nothing written for 2d)",
        "left over: claude-mem from v13.4.0 keeps its queue in memory and no longer processes this table (nothing written for 2d)",
      ]);
    }
  });

  it("a g1 install upgraded to g8 keeps its older columns: the time processing started is still read", () => {
    const file = dbFile();
    const db = upgradedClaudeMemDb(file, "g1", "g6");
    addMessage(db, { status: "processed", createdAt: now - 30 * MIN, finishedAt: now - 29 * MIN });
    addMessage(db, { status: "processing", createdAt: now - 11 * MIN, startedAt: now - 10 * MIN });
    migrateClaudeMemDb(db, "g6", "g8").close();
    const { shape, messages } = inspectClaudeMem(file, now);
    expect(shape.generation).toBe(LABEL.g8);
    expect(shape.columns.has("started_processing_at_epoch")).toBe(true);
    // The migration to g7 deleted the finished row.
    expect(messages).toHaveLength(1);
    expect(messages[0]!.stuck).toBe("processing 10m, past claude-mem's own 5m stuck limit");
  });
});

describe("a claude-mem source that cannot be read: a clear error, nothing changed", () => {
  it("missing, not SQLite, without the table, or of a shape reqwatch does not know", () => {
    const dir = tempParent();
    expect(thrown(() => inspectClaudeMem(path.join(dir, "nope.db")))).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("does not exist") });
    const text = path.join(dir, "notes.db");
    fs.writeFileSync(text, "these are not the tables you are looking for\n".repeat(100));
    expect(thrown(() => inspectClaudeMem(text))).toMatchObject({ code: "CORRUPT_FILE", message: expect.stringContaining("is not an SQLite database") });
    expect(fs.readFileSync(text, "utf8")).toBe("these are not the tables you are looking for\n".repeat(100));
    const other = path.join(dir, "other.db");
    new Database(other).exec("CREATE TABLE jobs (id INTEGER PRIMARY KEY)");
    expect(thrown(() => inspectClaudeMem(other))).toMatchObject({ code: "BAD_INPUT", message: expect.stringContaining("has no pending_messages table") });
    const odd = path.join(dir, "odd.db");
    new Database(odd).exec("CREATE TABLE pending_messages (id INTEGER PRIMARY KEY, content_session_id TEXT, state TEXT)");
    expect(thrown(() => inspectClaudeMem(odd))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/shape reqwatch does not know: no status, created_at_epoch/),
    });
  });

  it("locked by its owner past the busy wait", () => {
    const file = dbFile();
    const owner = createClaudeMemDb(file, "g3");
    addMessage(owner, { status: "pending", createdAt: now });
    owner.pragma("journal_mode = DELETE");
    owner.exec("BEGIN EXCLUSIVE");
    try {
      expect(thrown(() => inspectClaudeMem(file))).toMatchObject({ code: "LOCKED", message: expect.stringContaining("is locked by its owner") });
    } finally {
      owner.exec("ROLLBACK");
      owner.close();
    }
  });

  it("reading changes no byte of the database, while its owner is away or writing", () => {
    const file = dbFile();
    const owner = createClaudeMemDb(file, "g6");
    for (let i = 0; i < 50; i++)
      addMessage(owner, { status: i % 2 ? "processing" : "pending", createdAt: now - i * MIN, startedAt: i % 2 ? now - i * MIN : undefined });
    owner.close();
    const hash = () => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    const before = hash();
    expect(inspectClaudeMem(file, now).messages).toHaveLength(50);
    expect(hash()).toBe(before);
    // A WAL reader needs the -wal and -shm files beside the database, and SQLite makes them when
    // they are missing (as the owner's next start would): the log is left empty.
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(["claude-mem.db", "claude-mem.db-shm", "claude-mem.db-wal"]);
    expect(fs.statSync(`${file}-wal`).size).toBe(0);

    // The owner writes meanwhile (WAL): we read what it committed, and change nothing of it.
    const writer = new Database(file);
    addMessage(writer, { status: "pending", createdAt: now });
    const rows = () => JSON.stringify(writer.prepare("SELECT * FROM pending_messages ORDER BY id").all());
    const rowsBefore = rows();
    expect(inspectClaudeMem(file, now).messages).toHaveLength(51);
    expect(rows()).toBe(rowsBefore);
    writer.close();
  });
});
