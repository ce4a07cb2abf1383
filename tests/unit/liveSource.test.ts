import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { addMessage, claudeMemWithOneOfEach, createClaudeMemDb } from "../helpers/claudeMemDb";
import { tempParent } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";
import { LiveSource, SourceSet, sourceNames, sourcesFromEnv } from "../../lib/sources/liveSource";
import { resolveListFilters, type ListFilters } from "../../lib/model/listFilters";
import { sourceText } from "../../lib/sources/sourceSpec";
import { DEFAULT_QUERY } from "../../lib/model/requestQuery";
import { sourceRequestsView, sourceRequestView } from "../../lib/views/sourceRowsView";

const MIN = 60_000;
const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

function aClaudeMem() {
  const file = path.join(tempParent(), "claude-mem.db");
  return { file, ...claudeMemWithOneOfEach(file) };
}

const page = (source: LiveSource, filters: ListFilters) => source.page(resolveListFilters({ limit: 50, ...filters }));
const idsOf = (items: readonly { request: { requestId: string } }[]) => items.map((item) => item.request.requestId);

describe("a source the dashboard keeps open", () => {
  it("counts, finds the stuck, and pages with the table's filters, as the rows show them", () => {
    const { file, db, ids } = aClaudeMem();
    const before = sha256(file);
    const source = new LiveSource("claude-mem", { kind: "claude-mem", file });
    expect(source.refresh()).toBe(true);
    const status = source.status();
    expect(status).toMatchObject({
      name: "claude-mem",
      kind: "claude-mem",
      file,
      table: "pending_messages",
      generation: "g6 (v12.4.5-v12.4.9)",
      error: null,
      total: 5,
      stuck: 1,
    });
    expect(status.counts).toMatchObject({ processing: 2, queued: 1, completed: 1, failed: 1 });
    expect(source.stuck().map((row) => row.requestId)).toEqual([`claude-mem-${ids.crashed}`]);

    const all = Object.values(ids)
      .map((id) => `claude-mem-${id}`)
      .sort((a, b) => Number(b.slice(11)) - Number(a.slice(11)));
    expect(idsOf(page(source, {}).items)).toEqual(all);
    expect(idsOf(page(source, { states: ["processing"] }).items)).toEqual([`claude-mem-${ids.running}`, `claude-mem-${ids.crashed}`]);
    expect(idsOf(page(source, { states: ["completed", "failed"] }).items)).toEqual([`claude-mem-${ids.failed}`, `claude-mem-${ids.done}`]);
    expect(idsOf(page(source, { workspace: "api" }).items)).toHaveLength(3);
    expect(idsOf(page(source, { workspacePrefix: "we" }).items)).toHaveLength(2);
    expect(idsOf(page(source, { sessionId: "sess-2" }).items)).toEqual([`claude-mem-${ids.running}`]);
    // Words anywhere in the text, in any case; each word must be there.
    expect(idsOf(page(source, { text: "LOGIN fix" }).items)).toEqual([`claude-mem-${ids.crashed}`]);
    expect(idsOf(page(source, { text: "login nothing" }).items)).toEqual([]);
    expect(idsOf(page(source, { text: "50%_" }).items)).toEqual([]);
    expect(idsOf(page(source, { createdFrom: Date.now() - 10 * MIN }).items)).toHaveLength(3);
    expect(idsOf(page(source, { ids: [`claude-mem-${ids.crashed}`, "someone-else"] }).items)).toEqual([`claude-mem-${ids.crashed}`]);
    expect(page(source, { callbackFailed: true }).items).toEqual([]);

    // Keyset pages: every row once, in order, both ways.
    for (const order of ["desc", "asc"] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const next = page(source, { limit: 2, order, cursor });
        seen.push(...idsOf(next.items));
        cursor = next.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual(order === "desc" ? all : [...all].reverse());
    }
    expect(thrown(() => page(source, { cursor: "nonsense" }))).toMatchObject({ code: "BAD_INPUT" });
    expect(thrown(() => page(source, { cursor: page(source, { limit: 1 }).nextCursor!, order: "asc" }))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("another source or order"),
    });

    expect(source.get(`claude-mem-${ids.done}`)!.request).toMatchObject({ state: "completed", output: "observed: tests pass", workspace: "api" });
    expect(source.get("claude-mem-999999")).toBeNull();
    expect(source.get("jobs-1")).toBeNull();
    source.close();
    // Before the owner closes (its close checkpoints its own WAL into the file).
    expect(sha256(file)).toBe(before);
    db.close();
  });

  it("sees the owner's commits (data_version), and only then reads again", () => {
    const { file, db } = aClaudeMem();
    const source = new LiveSource("claude-mem", { kind: "claude-mem", file });
    const t = Date.now();
    source.refresh(t);
    expect(source.refresh(t + 250)).toBe(false);
    expect(source.status().readAt).toBe(t);
    addMessage(db, { status: "processing", createdAt: t - 20 * MIN, startedAt: t - 10 * MIN });
    expect(source.refresh(t + 500)).toBe(true);
    expect(source.status().readAt).toBe(t + 500);
    expect(source.status()).toMatchObject({ total: 6, stuck: 2 });
    source.close();
    db.close();
  });

  it("a file replaced under its name is read anew; one that goes away is an error, tried again, and back when it is", () => {
    const { file, db } = aClaudeMem();
    db.close();
    const source = new LiveSource("claude-mem", { kind: "claude-mem", file });
    const t = Date.now();
    source.refresh(t);
    expect(source.status().total).toBe(5);
    const replacement = path.join(path.dirname(file), "new.db");
    const other = createClaudeMemDb(replacement, "g8");
    addMessage(other, { status: "pending", createdAt: Date.now() });
    other.close();
    fs.renameSync(replacement, file);
    source.refresh(t + 100);
    expect(source.status()).toMatchObject({ total: 1, generation: "g8 (v13.9.1 onward)" });

    fs.rmSync(file);
    for (const suffix of ["-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
    source.refresh(t + 200);
    expect(source.status()).toMatchObject({ error: { code: "NOT_FOUND", message: expect.stringContaining("does not exist") }, total: 0 });
    expect(thrown(() => source.page(resolveListFilters({}), t + 250))).toMatchObject({ code: "NOT_FOUND" });
    const back = createClaudeMemDb(file, "g3");
    back.close();
    // Not before the retry interval...
    source.refresh(t + 300);
    expect(source.status().error).not.toBeNull();
    source.refresh(t + 3000);
    expect(source.status()).toMatchObject({ error: null, total: 0, generation: "g3 (v8.5.5-v12.2.1)" });
    source.close();
  });

  it("a set of sources: each failure its own, with names, and the env's list", () => {
    const { file, db } = aClaudeMem();
    db.close();
    const dir = tempParent();
    const text = path.join(dir, "notes.db");
    fs.writeFileSync(text, "not a database at all, just some text that is long enough to be a header");
    const mapping = path.join(dir, "jobs.json");
    fs.writeFileSync(
      mapping,
      JSON.stringify({ database: "queue.db", table: "jobs", id: "id", status: { column: "state", values: { new: "queued" } }, times: { created: "at" } }),
    );
    const queue = new Database(path.join(dir, "queue.db"));
    queue.exec("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT, at INTEGER)");
    queue.close();

    const set = new SourceSet([
      { kind: "claude-mem", file },
      { kind: "claude-mem", file: text },
      { kind: "sqlite", mapping },
    ]);
    let changed: string[] = [];
    set.start((names) => (changed = names), 60_000);
    set.close();
    expect(changed).toEqual(["claude-mem", "claude-mem-2", "jobs"]);
    const [good, notSqlite, badMapping] = set.statuses();
    expect(good).toMatchObject({ error: null, total: 5 });
    expect(notSqlite).toMatchObject({ error: { code: "CORRUPT_FILE", message: expect.stringContaining("is not an SQLite database") } });
    expect(badMapping).toMatchObject({ error: { code: "BAD_INPUT", message: expect.stringContaining("status.column (state)") }, table: "jobs" });
    expect(thrown(() => set.get("nope"))).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("claude-mem, claude-mem-2, jobs") });

    expect(
      sourceNames([
        { kind: "sqlite", mapping: "/a/my queue.json" },
        { kind: "sqlite", mapping: "/b/my queue.json" },
      ]),
    ).toEqual(["my_queue", "my_queue-2"]);
    expect(sourcesFromEnv("claude-mem, sqlite:/x/m.json", "/")).toEqual([
      { kind: "claude-mem", file: expect.stringContaining(".claude-mem") },
      { kind: "sqlite", mapping: "/x/m.json" },
    ]);
    expect(sourcesFromEnv('["claude-mem:/a,b/c.db"]')).toEqual([{ kind: "claude-mem", file: "/a,b/c.db" }]);
    expect(sourcesFromEnv(" ")).toEqual([]);
    // Opened for writing: the spec keeps it, and says it again.
    const [writable] = sourcesFromEnv("claude-mem:/a/b.db?write=1");
    expect(writable).toEqual({ kind: "claude-mem", file: "/a/b.db", write: true });
    expect(sourceText(writable!)).toBe("claude-mem:/a/b.db?write=1");
    expect(new LiveSource("x", writable!).status().writable).toBe(true);
    expect(new LiveSource("y", { kind: "sqlite", mapping: "/m.json", write: true }).status().writable).toBe(false);
    expect(thrown(() => sourcesFromEnv("[1]"))).toMatchObject({ code: "BAD_INPUT" });
    expect(thrown(() => sourcesFromEnv("redis:x"))).toMatchObject({ code: "BAD_INPUT", message: expect.stringContaining("Unknown source") });
  });

  it("the table's view of a source: its rows with their source and stuck reasons; stuck only; a row's own view", () => {
    const { file, db, ids } = aClaudeMem();
    const source = new LiveSource("claude-mem", { kind: "claude-mem", file });
    source.refresh();
    const view = sourceRequestsView(source, { ...DEFAULT_QUERY, source: "claude-mem", states: ["failed"] });
    expect(view.items).toEqual([
      expect.objectContaining({
        requestId: `claude-mem-${ids.failed}`,
        source: "claude-mem",
        state: "failed",
        note: "failed after 3 retries, claude-mem's limit",
        stuckReason: null,
      }),
    ]);
    const stuck = sourceRequestsView(source, { ...DEFAULT_QUERY, source: "claude-mem", stuck: true });
    expect(stuck.items.map((row) => [row.requestId, row.stuckReason])).toEqual([
      [`claude-mem-${ids.crashed}`, expect.stringMatching(/^processing 2m; claude-mem worker pid \d+ is gone$/)],
    ]);
    const one = sourceRequestView(source, `claude-mem-${ids.crashed}`)!;
    expect(one).toMatchObject({
      source: { name: "claude-mem" },
      request: { state: "processing", prompt: "observation Edit: fix the login form" },
      stuckReason: expect.stringContaining("is gone"),
    });
    source.close();
    db.close();
  });

  it("each kind of bad source is its own error in words, found quickly: no table, an unknown shape, a lock its owner holds", () => {
    const dir = tempParent();
    const other = path.join(dir, "other.db");
    new Database(other).exec("CREATE TABLE notes (id INTEGER PRIMARY KEY)").close();
    const odd = path.join(dir, "odd.db");
    new Database(odd).exec("CREATE TABLE pending_messages (id INTEGER PRIMARY KEY, body TEXT)").close();
    const locked = path.join(dir, "locked.db");
    const owner = createClaudeMemDb(locked, "g3");
    // A rollback journal (not WAL): an exclusive transaction keeps readers out.
    owner.pragma("journal_mode = DELETE");
    owner.exec("BEGIN EXCLUSIVE");
    const set = new SourceSet([
      { kind: "claude-mem", file: other },
      { kind: "claude-mem", file: odd },
      { kind: "claude-mem", file: locked },
    ]);
    const started = performance.now();
    set.start(() => {}, 60_000);
    const took = performance.now() - started;
    set.close();
    owner.exec("ROLLBACK");
    owner.close();
    const [noTable, unknown, busy] = set.statuses();
    expect(noTable!.error).toEqual({
      code: "BAD_INPUT",
      message: `claude-mem source: ${other} has no pending_messages table; is it claude-mem's database (${path.join(process.env.HOME ?? "", ".claude-mem", "claude-mem.db")})?`,
    });
    expect(unknown!.error).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("has a shape reqwatch does not know: no status, created_at_epoch"),
    });
    expect(busy!.error).toMatchObject({ code: "LOCKED", message: `claude-mem source: ${locked} is locked by its owner; try again.` });
    // The dashboard's one thread waited a moment for the lock, not seconds.
    expect(took).toBeLessThan(1000);
  });
});
