import Database from "better-sqlite3";
import { aDeadPid } from "./processes";

/**
 * claude-mem databases of every generation of its `pending_messages` queue (the column sets of
 * its releases from v7.3 on), made fresh or upgraded from an older one, with rows in them.
 */
export const GENERATIONS = ["g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8"] as const;
export type Generation = (typeof GENERATIONS)[number];

const N = (g: Generation) => GENERATIONS.indexOf(g) + 1;

function sessionsTable(g: Generation): string {
  const ids = N(g) === 1 ? "claude_session_id TEXT UNIQUE NOT NULL, sdk_session_id TEXT" : "content_session_id TEXT UNIQUE NOT NULL, memory_session_id TEXT";
  return `CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, ${ids}, project TEXT NOT NULL${N(g) >= 3 ? ", platform_source TEXT" : ""},
    user_prompt TEXT, started_at_epoch INTEGER NOT NULL, completed_at_epoch INTEGER, status TEXT CHECK(status IN ('active', 'completed', 'failed')) NOT NULL DEFAULT 'active')`;
}

/** The table as a fresh install of generation `g` creates it. */
function freshQueueTable(g: Generation): string {
  const n = N(g);
  const session = n === 1 ? "claude_session_id" : "content_session_id";
  const statuses = n >= 7 ? "'pending', 'processing'" : "'pending', 'processing', 'processed', 'failed'";
  const columns = [
    "id INTEGER PRIMARY KEY AUTOINCREMENT",
    "session_db_id INTEGER NOT NULL REFERENCES sdk_sessions(id) ON DELETE CASCADE",
    `${session} TEXT NOT NULL`,
    ...(n >= 6 ? ["tool_use_id TEXT"] : []),
    "message_type TEXT NOT NULL CHECK(message_type IN ('observation', 'summarize'))",
    "tool_name TEXT",
    "tool_input TEXT",
    "tool_response TEXT",
    "cwd TEXT",
    ...(n < 7 ? ["last_user_message TEXT"] : []),
    "last_assistant_message TEXT",
    "prompt_number INTEGER",
    `status TEXT NOT NULL DEFAULT 'pending' CHECK(status IN (${statuses}))`,
    ...(n < 7 ? ["retry_count INTEGER NOT NULL DEFAULT 0"] : []),
    "created_at_epoch INTEGER NOT NULL",
    ...(n < 5 || n === 6 ? ["started_processing_at_epoch INTEGER"] : []),
    ...(n < 7 ? ["completed_at_epoch INTEGER"] : []),
    ...(n >= 3 && n < 7 ? ["failed_at_epoch INTEGER"] : []),
    ...(n >= 4 ? ["agent_type TEXT", "agent_id TEXT"] : []),
    ...(n === 6 ? ["worker_pid INTEGER"] : []),
  ];
  return `CREATE TABLE pending_messages (${columns.join(", ")})`;
}

function indexes(g: Generation): string[] {
  const n = N(g);
  const session = n === 1 ? "claude_session_id" : "content_session_id";
  return [
    `CREATE INDEX idx_pending_messages_session ON pending_messages(session_db_id)`,
    `CREATE INDEX idx_pending_messages_status ON pending_messages(status)`,
    ...(n === 6 ? ["CREATE INDEX idx_pending_messages_worker_pid ON pending_messages(worker_pid)"] : []),
    ...(n >= 6 && n < 8 ? [`CREATE UNIQUE INDEX ux_pending_tool_use ON pending_messages(${session}, tool_use_id)`] : []),
    ...(n === 8 ? ["CREATE UNIQUE INDEX ux_pending_session_tool_use ON pending_messages(session_db_id, tool_use_id)"] : []),
  ];
}

/** A fresh database of generation `g`, in WAL mode as claude-mem keeps it. */
export function createClaudeMemDb(file: string, g: Generation): Database.Database {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec([sessionsTable(g), freshQueueTable(g), ...indexes(g)].join(";\n"));
  return db;
}

/** A database created at `from` and migrated to `to`. */
export function upgradedClaudeMemDb(file: string, from: Generation, to: Generation): Database.Database {
  return migrateClaudeMemDb(createClaudeMemDb(file, from), from, to);
}

/** Migrate a database of generation `from`, step by step as each release's migrations do, to `to`. */
export function migrateClaudeMemDb(db: Database.Database, from: Generation, to: Generation): Database.Database {
  for (let n = N(from) + 1; n <= N(to); n++) {
    if (n === 2) {
      db.exec(
        "ALTER TABLE pending_messages RENAME COLUMN claude_session_id TO content_session_id; ALTER TABLE sdk_sessions RENAME COLUMN claude_session_id TO content_session_id; ALTER TABLE sdk_sessions RENAME COLUMN sdk_session_id TO memory_session_id",
      );
    }
    if (n === 3) db.exec("ALTER TABLE pending_messages ADD COLUMN failed_at_epoch INTEGER; ALTER TABLE sdk_sessions ADD COLUMN platform_source TEXT");
    if (n === 4) db.exec("ALTER TABLE pending_messages ADD COLUMN agent_type TEXT; ALTER TABLE pending_messages ADD COLUMN agent_id TEXT");
    if (n === 6) {
      db.exec("ALTER TABLE pending_messages ADD COLUMN tool_use_id TEXT; ALTER TABLE pending_messages ADD COLUMN worker_pid INTEGER");
      db.exec(
        "CREATE INDEX idx_pending_messages_worker_pid ON pending_messages(worker_pid); CREATE UNIQUE INDEX ux_pending_tool_use ON pending_messages(content_session_id, tool_use_id)",
      );
    }
    if (n === 7) {
      db.exec("DELETE FROM pending_messages WHERE status NOT IN ('pending', 'processing')");
      db.exec("DROP INDEX IF EXISTS idx_pending_messages_worker_pid");
      for (const column of ["retry_count", "failed_at_epoch", "completed_at_epoch", "worker_pid"])
        db.exec(`ALTER TABLE pending_messages DROP COLUMN ${column}`);
    }
    if (n === 8)
      db.exec("DROP INDEX IF EXISTS ux_pending_tool_use; CREATE UNIQUE INDEX ux_pending_session_tool_use ON pending_messages(session_db_id, tool_use_id)");
  }
  return db;
}

export interface MessageInput {
  status: "pending" | "processing" | "processed" | "failed";
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  retries?: number;
  workerPid?: number;
  tool?: string;
  input?: string;
  response?: string;
  project?: string;
  session?: string;
}

/** Insert a session (once per content session id) and a message, writing only the columns the table has. */
export function addMessage(db: Database.Database, message: MessageInput): number {
  return addMessages(db, [message])[0]!;
}

/** Insert messages (and their sessions) in one transaction, writing only the columns the table has; their ids. */
export function addMessages(db: Database.Database, messages: readonly MessageInput[]): number[] {
  const columns = new Set(db.prepare("SELECT name FROM pragma_table_info('pending_messages')").pluck().all() as string[]);
  const sessionColumn = columns.has("content_session_id") ? "content_session_id" : "claude_session_id";
  const addSession = db.prepare(`INSERT OR IGNORE INTO sdk_sessions (${sessionColumn}, project, started_at_epoch) VALUES (?, ?, ?)`);
  const sessionDbId = db.prepare(`SELECT id FROM sdk_sessions WHERE ${sessionColumn} = ?`).pluck();
  const inserts = new Map<string, Database.Statement>();
  return db.transaction(() =>
    messages.map((message) => {
      const session = message.session ?? "sess-1";
      addSession.run(session, message.project ?? "my-app", message.createdAt);
      const values: Record<string, unknown> = {
        session_db_id: sessionDbId.get(session) as number,
        [sessionColumn]: session,
        message_type: "observation",
        tool_name: message.tool ?? "Bash",
        tool_input: message.input ?? JSON.stringify({ command: "npm test" }),
        tool_response: message.response ?? null,
        status: message.status,
        created_at_epoch: message.createdAt,
        started_processing_at_epoch: message.startedAt ?? null,
        completed_at_epoch: message.status === "processed" ? (message.finishedAt ?? null) : null,
        failed_at_epoch: message.status === "failed" ? (message.finishedAt ?? null) : null,
        retry_count: message.retries ?? 0,
        worker_pid: message.workerPid ?? null,
        tool_use_id: columns.has("tool_use_id") ? `toolu_${Math.random().toString(36).slice(2)}` : null,
      };
      // A generation without failed_at_epoch recorded a failure's time as its completion.
      if (message.status === "failed" && !columns.has("failed_at_epoch")) values.completed_at_epoch = message.finishedAt ?? null;
      const names = Object.keys(values).filter((name) => columns.has(name));
      const key = names.join(",");
      const insert = inserts.get(key) ?? db.prepare(`INSERT INTO pending_messages (${key}) VALUES (${names.map(() => "?").join(", ")})`);
      inserts.set(key, insert);
      return Number(insert.run(...names.map((name) => values[name])).lastInsertRowid);
    }),
  )();
}

/**
 * A big queue as a claude-mem that stopped keeping up leaves it, `count` messages as of `now`:
 * most pending, created over the last two hours (so about half past claude-mem's hour), and
 * some of every other kind on either side of each stuck rule: processing for a worker that is gone
 * or that runs (this process), or for none, past claude-mem's five minutes or not; processed;
 * failed. Each with `textBytes` of text in its input and as much in its response.
 */
export function aBigClaudeMemQueue(count: number, now: number, { textBytes = 200, dead }: { textBytes?: number; dead: number }): MessageInput[] {
  const min = 60_000;
  const text = (kind: string, i: number) => `${kind} ${i} `.padEnd(textBytes, "x");
  return Array.from({ length: count }, (_, i): MessageInput => {
    const createdAt = now - Math.round(((count - i) * 120 * min) / count);
    const common = { createdAt, input: text("input", i), response: text("response", i), project: `project-${i % 7}`, session: `sess-${i % 40}` };
    switch (i % 20) {
      case 1:
        return { ...common, status: "processing", startedAt: now - 3 * min, workerPid: dead };
      case 2:
        return { ...common, status: "processing", startedAt: now - 30 * min, workerPid: process.pid };
      case 3:
        return { ...common, status: "processing", startedAt: now - (i % 2 ? 2 : 9) * min };
      case 4:
        return { ...common, status: "processed", startedAt: createdAt + 1000, finishedAt: createdAt + 5000 };
      case 5:
        return { ...common, status: "failed", startedAt: createdAt + 1000, finishedAt: createdAt + 9000, retries: 3 };
      default:
        return { ...common, status: "pending" };
    }
  });
}

/**
 * A g6 claude-mem database in WAL mode, as claude-mem keeps it, with the owner's connection left
 * open and one message of each kind: a processing one whose worker is gone (stuck), one whose
 * worker runs (this process), one pending, one processed, one failed at the retry limit.
 */
export function claudeMemWithOneOfEach(file: string) {
  const db = createClaudeMemDb(file, "g6");
  db.pragma("journal_mode = WAL");
  const now = Date.now();
  const min = 60_000;
  const dead = aDeadPid();
  const ids = {
    crashed: addMessage(db, {
      status: "processing",
      createdAt: now - 3 * min,
      startedAt: now - 2 * min,
      workerPid: dead,
      project: "web",
      tool: "Edit",
      input: "fix the login form",
    }),
    running: addMessage(db, {
      status: "processing",
      createdAt: now - 2 * min,
      startedAt: now - min,
      workerPid: process.pid,
      project: "web",
      session: "sess-2",
    }),
    waiting: addMessage(db, { status: "pending", createdAt: now - min, project: "api", session: "sess-3" }),
    done: addMessage(db, {
      status: "processed",
      createdAt: now - 30 * min,
      startedAt: now - 29 * min,
      finishedAt: now - 28 * min,
      response: "observed: tests pass",
      project: "api",
      session: "sess-3",
    }),
    failed: addMessage(db, {
      status: "failed",
      createdAt: now - 40 * min,
      startedAt: now - 39 * min,
      finishedAt: now - 38 * min,
      retries: 3,
      project: "api",
      session: "sess-3",
    }),
  };
  return { db, ids, dead, now };
}

/** The backlog of a claude-mem whose worker stopped taking messages: `count` pending messages over the last two hours, `textBytes` in the input and as much in the response. */
export function aPendingBacklog(count: number, now: number, textBytes: number): MessageInput[] {
  return Array.from({ length: count }, (_, i) => ({
    status: "pending",
    createdAt: now - Math.round(((count - i) * 7_200_000) / count),
    input: `input ${i} `.padEnd(textBytes, "x"),
    response: `response ${i} `.padEnd(textBytes, "y"),
    session: `sess-${i % 40}`,
  }));
}
