import type Database from "better-sqlite3";

/**
 * How far reqwatch read one of an agent's files (lib/telemetry/agentFiles), kept in the telemetry
 * store, never beside the file: the file as the file system names it (a file replaced at the path
 * is read from its start), the offset just past the last whole line read (a half-written line is
 * read again once whole), whether it is inside a line too long to keep (skipped to its end), the
 * mapping's state there (the turn the file is in), and what it counted.
 */
export interface FilePosition {
  path: string;
  agent: string;
  dev: number;
  ino: number;
  offset: number;
  skipping: boolean;
  /** The agent's mapping state at `offset`, as JSON. */
  state: string;
  session: string | null;
  lines: number;
  malformed: number;
  oversized: number;
  readAt: number;
}

interface PositionRow {
  path: string;
  agent: string;
  dev: number;
  ino: number;
  offset: number;
  skipping: number;
  state: string;
  session: string | null;
  lines: number;
  malformed: number;
  oversized: number;
  read_at: number;
}

const toPosition = (row: PositionRow): FilePosition => ({
  path: row.path,
  agent: row.agent,
  dev: row.dev,
  ino: row.ino,
  offset: row.offset,
  skipping: row.skipping === 1,
  state: row.state,
  session: row.session,
  lines: row.lines,
  malformed: row.malformed,
  oversized: row.oversized,
  readAt: row.read_at,
});

/** Every file's position, of one agent. */
export function filePositions(db: Database.Database, agent: string): FilePosition[] {
  return (db.prepare("SELECT * FROM agent_files WHERE agent = ?").all(agent) as PositionRow[]).map(toPosition);
}

/** The statement that keeps a file's position (prepared once by the store). */
export function keepPositionStatement(db: Database.Database) {
  const statement = db.prepare(
    `INSERT INTO agent_files (path, agent, dev, ino, offset, skipping, state, session, lines, malformed, oversized, read_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (path) DO UPDATE SET agent = excluded.agent, dev = excluded.dev, ino = excluded.ino, offset = excluded.offset, skipping = excluded.skipping, state = excluded.state, session = excluded.session, lines = excluded.lines, malformed = excluded.malformed, oversized = excluded.oversized, read_at = excluded.read_at`,
  );
  return (p: FilePosition) =>
    statement.run(p.path, p.agent, p.dev, p.ino, p.offset, p.skipping ? 1 : 0, p.state, p.session, p.lines, p.malformed, p.oversized, p.readAt);
}

/** What was read of one agent's files: how many, the lines read, those skipped (malformed, or past the size bound), and when. */
export interface AgentFileCounts {
  agent: string;
  files: number;
  lines: number;
  malformed: number;
  oversized: number;
  lastReadAt: number;
}

/** What the files of each agent add up to. */
export function agentFileCounts(db: Database.Database): AgentFileCounts[] {
  return db
    .prepare(
      "SELECT agent, count(*) AS files, sum(lines) AS lines, sum(malformed) AS malformed, sum(oversized) AS oversized, max(read_at) AS lastReadAt FROM agent_files GROUP BY agent ORDER BY agent",
    )
    .all() as never;
}
