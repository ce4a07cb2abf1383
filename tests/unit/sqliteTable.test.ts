import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { aDeadPid } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";
import { sourceView } from "../../lib/views/sourceView";

const MIN = 60_000;

/** A job queue with a folder per job: a jobs table, each job's folder named in its JSON payload, with meta/ai-done.json and meta/ai.pid in it. */
function aJobQueue() {
  const dir = tempParent();
  const database = path.join(dir, "queue.db");
  const db = new Database(database);
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE jobs (id TEXT PRIMARY KEY, queue TEXT NOT NULL, status TEXT NOT NULL, payload TEXT NOT NULL, error TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, locked_at INTEGER, completed_at INTEGER)`);
  const now = Date.now();
  const sqliteTime = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19);
  const job = (id: string, status: string, lockedAgo: number | null, marker?: { done?: boolean; pid?: number }) => {
    const taskDir = path.join(dir, "tasks", id);
    fs.mkdirSync(path.join(taskDir, "meta"), { recursive: true });
    if (marker?.done) fs.writeFileSync(path.join(taskDir, "meta", "ai-done.json"), "{}");
    if (marker?.pid !== undefined) fs.writeFileSync(path.join(taskDir, "meta", "ai.pid"), `${marker.pid}\n`);
    db.prepare("INSERT INTO jobs (id, queue, status, payload, error, created_at, locked_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(
      id,
      "ai-phases",
      status,
      JSON.stringify({ taskDir, phase: "implement" }),
      status === "failed" ? "model refused" : null,
      sqliteTime(now - 60 * MIN),
      lockedAgo === null ? null : now - lockedAgo,
      status === "completed" || status === "failed" ? now - MIN : null,
    );
  };
  const dead = aDeadPid();
  job("done-waiting", "processing", 30 * MIN, { done: true, pid: dead });
  job("running", "processing", MIN, { pid: process.pid });
  job("crashed", "processing", MIN, { pid: dead });
  job("silent", "processing", 30 * MIN);
  job("long-lived", "processing", 120 * MIN, { pid: process.pid });
  job("finished", "completed", 2 * MIN);
  job("refused", "failed", 2 * MIN);
  job("odd", "archived", null);
  job("waiting", "pending", null);
  db.close();
  const mapping = path.join(dir, "reqwatch-source.json");
  const body = {
    database: "queue.db",
    table: "jobs",
    id: "id",
    status: { column: "status", values: { pending: "queued", processing: "processing", completed: "completed", failed: "failed" } },
    times: { created: "created_at", started: "locked_at", finished: "completed_at" },
    workspace: "queue",
    prompt: "payload",
    error: "error",
    markers: { payload: "payload", key: "taskDir", done: "{dir}/meta/ai-done.json", pid: "{dir}/meta/ai.pid" },
  };
  fs.writeFileSync(mapping, JSON.stringify(body));
  return { dir, database, mapping, body, dead, now };
}

describe("a SQLite job table, by a mapping (a queue with a folder per job)", () => {
  it("reads epoch seconds written as text, says so when a time cannot be read, and when a payload names no folder", () => {
    const dir = tempParent();
    const database = path.join(dir, "q.db");
    const db = new Database(database);
    db.exec("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT, created TEXT, payload TEXT)");
    const now = Date.now();
    db.prepare("INSERT INTO jobs (status, created, payload) VALUES ('processing', ?, '{\"taskDir\": \"t1\"}')").run(
      String(Math.floor((now - 20 * MIN) / 1000)),
    );
    db.prepare("INSERT INTO jobs (status, created, payload) VALUES ('processing', 'yesterday', '{}')").run();
    db.close();
    const mapping = path.join(dir, "m.json");
    fs.writeFileSync(
      mapping,
      JSON.stringify({
        database: "q.db",
        table: "jobs",
        id: "id",
        status: { column: "status", values: { processing: "processing" } },
        times: { created: "created" },
        markers: { payload: "payload", key: "taskDir", done: "{dir}/done" },
      }),
    );
    const [unreadable, seconds] = sourceView({ kind: "sqlite", mapping }, { all: true, limit: 10 }, now).messages;
    expect(seconds).toMatchObject({
      createdAt: Math.floor((now - 20 * MIN) / 1000) * 1000,
      stuckReason: expect.stringMatching(/^processing 20m( \d+s)?, past 10m, with no done marker$/),
      note: null,
    });
    expect(unreadable).toMatchObject({
      createdAt: 0,
      stuckReason: null,
      note: 'created holds "yesterday", which is not a time; its payload has no "taskDir": no marker could be checked',
    });
  });

  it("maps statuses and times, and judges each processing job by its done marker, its pid file and its age", () => {
    const { database, mapping, dead, now } = aJobQueue();
    const hash = crypto.createHash("sha256").update(fs.readFileSync(database)).digest("hex");
    const view = sourceView({ kind: "sqlite", mapping }, { all: true, limit: 100 }, now);
    expect(view.source).toMatchObject({ kind: "sqlite", file: database, mapping, table: "jobs", generation: null });
    expect(view.counts).toMatchObject({ queued: 1, processing: 5, completed: 1, failed: 2 });
    const job = (id: string) => view.messages.find((message) => message.requestId === `jobs-${id}`)!;
    expect(job("done-waiting").stuckReason).toBe(
      `processing 30m; its done marker ${path.join(path.dirname(database), "tasks", "done-waiting", "meta", "ai-done.json")} exists: a result waits to be recovered`,
    );
    expect(job("running")).toMatchObject({ stuckReason: null, note: `worker pid ${process.pid} runs` });
    expect(job("crashed").stuckReason).toBe(`processing 1m; worker pid ${dead} is gone and no done marker`);
    expect(job("silent").stuckReason).toBe("processing 30m, past 10m, with no done marker and no pid");
    expect(job("long-lived").stuckReason).toBe(`processing 2h, past 10m; pid ${process.pid} runs, but a pid can be reused`);
    expect(view.stuck).toBe(4);
    // SQLite's CURRENT_TIMESTAMP text is UTC.
    expect(job("waiting")).toMatchObject({ state: "queued", workspace: "ai-phases", createdAt: Math.floor((now - 60 * MIN) / 1000) * 1000 });
    expect(job("refused")).toMatchObject({ state: "failed", error: "model refused", completedAt: now - MIN });
    expect(job("odd")).toMatchObject({
      state: "failed",
      error: 'status "archived" is not in the mapping\'s status.values',
      note: 'status "archived" is not in the mapping\'s status.values',
    });
    expect(crypto.createHash("sha256").update(fs.readFileSync(database)).digest("hex")).toBe(hash);
    // The counts and the stuck count cover every job, whatever the page listed.
    const page = sourceView({ kind: "sqlite", mapping }, { all: true, limit: 2 }, now);
    expect(page).toMatchObject({ total: 9, stuck: 4, counts: view.counts });
    expect(page.messages.map((message) => message.requestId)).toEqual(["jobs-waiting", "jobs-silent"]);
    expect(sourceView({ kind: "sqlite", mapping }, { limit: 2 }, now).messages).toHaveLength(2);
  });

  it("a pid file that is not a small regular file is not read, and the job's note says so", () => {
    const { dir, mapping, now } = aJobQueue();
    const pidFile = (id: string) => path.join(dir, "tasks", id, "meta", "ai.pid");
    // A device would be read until memory runs out; a file this long holds no pid.
    fs.rmSync(pidFile("running"));
    fs.symlinkSync("/dev/zero", pidFile("running"));
    fs.writeFileSync(pidFile("crashed"), "1".repeat(65));
    const view = sourceView({ kind: "sqlite", mapping }, { all: true, limit: 100 }, now);
    const job = (id: string) => view.messages.find((message) => message.requestId === `jobs-${id}`)!;
    expect(job("running")).toMatchObject({ stuckReason: null, note: `its pid file ${pidFile("running")} is a character device, not a regular file: not read` });
    expect(job("crashed")).toMatchObject({ stuckReason: null, note: `its pid file ${pidFile("crashed")} is 65 bytes, over the 64 bytes limit: not read` });
  });

  it("a mapping that is wrong says where, and reads nothing", () => {
    const { dir, mapping, body } = aJobQueue();
    const write = (value: unknown) => {
      const file = path.join(dir, `m${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
      return { kind: "sqlite" as const, mapping: file };
    };
    const view = (spec: { kind: "sqlite"; mapping: string }) => () => sourceView(spec, { limit: 10 });
    expect(thrown(view({ kind: "sqlite", mapping: path.join(dir, "none.json") }))).toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("it does not exist"),
    });
    // Where it stops, never the text there: the path may be someone else's file.
    const notJson = write('{\n  "database": "queue.db",\n  token: "ghp_SECRET"\n}');
    expect(thrown(view(notJson))).toMatchObject({
      code: "BAD_INPUT",
      message: `sqlite source: the mapping ${notJson.mapping} is not JSON (line 3, column 3); nothing was read.`,
    });
    expect(thrown(view({ kind: "sqlite", mapping: dir }))).toMatchObject({
      code: "BAD_INPUT",
      message: `sqlite source: the mapping ${dir} is a folder, not a regular file; nothing was read.`,
    });
    expect(thrown(view(write(" ".repeat(1024 * 1024 + 1))))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("is 1048577 bytes, over the 1048576 bytes limit; nothing was read."),
    });
    expect(thrown(view(write({ ...body, status: { column: "status", values: { done: "finished" } } })))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/wrong at status\.values\.done: must be a reqwatch state/),
    });
    expect(thrown(view(write({ ...body, retries: "attempts" })))).toMatchObject({ code: "BAD_INPUT", message: expect.stringContaining("wrong at its top") });
    expect(thrown(view(write({ ...body, pid: "worker_pid" })))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/the mapping names columns jobs in .* does not have: pid \(worker_pid\); it has id, queue, status/),
    });
    expect(thrown(view(write({ ...body, status: undefined })))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("wrong at status: it is required"),
    });
    expect(thrown(view(write({ ...body, table: "tasks" })))).toMatchObject({ code: "BAD_INPUT", message: expect.stringContaining("has no table tasks") });
    expect(thrown(view(write({ ...body, stuckAfter: "10" })))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining('is wrong at stuckAfter: "10" is not a duration; use a number with a unit'),
    });
    expect(thrown(view(write({ ...body, database: "missing.db" })))).toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("missing.db does not exist"),
    });
    expect(sourceView({ kind: "sqlite", mapping }, { limit: 10 }).stuck).toBe(4);
  });
});
