import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { openDatabase } from "../../sqlite/openDatabase";
import { transcriptsOf } from "../agentFiles/followAgentFiles";
import { LINE_BOUNDS, readLines, type LineBounds } from "../agentFiles/readLines";
import type { Json } from "../agentFiles/lineFields";
import { estimateCostUsd } from "../prices";
import { USAGE_AGENTS, USAGE_READERS, type UsageAgent, type UsageCall } from "./usageLines";

/**
 * The usage ledger (`usage.db`, beside telemetry.db in the state folder's store folder): each model
 * call the agents' own files tell of, with its tokens and cost, and how far each file was read. Apart
 * from the lifecycles, it is never expired: a report covers the whole history the files hold. Each
 * update reads only the bytes a file gained since (a file replaced or truncated is read again from its
 * start); nothing is written under the agents' folders.
 */

export const usageLedgerFile = (storeDir: string) => path.join(storeDir, "usage.db");

const DDL = `
CREATE TABLE IF NOT EXISTS usage_files (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  agent TEXT NOT NULL,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  skipping INTEGER NOT NULL,
  state TEXT NOT NULL,
  lines INTEGER NOT NULL,
  malformed INTEGER NOT NULL,
  oversized INTEGER NOT NULL
);
-- One row a call: its file and line (files only grow: a line's number stays its own), its tokens, its cost (null: unknown).
CREATE TABLE IF NOT EXISTS usage_calls (
  file INTEGER NOT NULL,
  line INTEGER NOT NULL,
  agent TEXT NOT NULL,
  at INTEGER NOT NULL,
  session TEXT NOT NULL,
  project TEXT NOT NULL,
  model TEXT,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  extra INTEGER NOT NULL,
  cost REAL,
  cost_by TEXT,
  dedupe TEXT,
  sidechain INTEGER NOT NULL,
  PRIMARY KEY (file, line)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS usage_calls_dedupe ON usage_calls (dedupe) WHERE dedupe IS NOT NULL;
`;

/** Each agent's folder to read; null or absent: not read (its files turned off). */
export type UsageFolders = Partial<Record<UsageAgent, string | null>>;

/** What the ledger read: files, lines, and the lines skipped (not JSON, or past the line bound). */
export interface LedgerStatus {
  files: number;
  lines: number;
  malformed: number;
  oversized: number;
}

/** Calls summed per quarter hour (a slot: every time zone's offset is a whole number of them), agent, model and group. */
export interface SlotRow {
  slot: number;
  agent: UsageAgent;
  model: string | null;
  /** The session or project, for a report by either; else "". */
  grp: string;
  project: string;
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  extra: number;
  costUsd: number;
  estimatedCalls: number;
  unpricedCalls: number;
  lastAt: number;
}

export const SLOT_MS = 15 * 60_000;

interface FileRow {
  id: number;
  path: string;
  agent: UsageAgent;
  dev: number;
  ino: number;
  offset: number;
  skipping: number;
  state: string;
  lines: number;
  malformed: number;
  oversized: number;
}

export class UsageLedger {
  private readonly db: Database.Database;
  private readonly statements;

  /** `file`: the ledger's file, made when missing; null: kept in memory only (no state folder to keep it in). */
  constructor(file: string | null) {
    this.db = openDatabase(file ?? ":memory:");
    if (file) {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("busy_timeout = 10000");
    }
    this.db.exec(DDL);
    this.statements = {
      file: this.db.prepare("SELECT * FROM usage_files WHERE path = ?"),
      addFile: this.db.prepare("INSERT INTO usage_files (path, agent, dev, ino, offset, skipping, state, lines, malformed, oversized) VALUES (@path, @agent, @dev, @ino, 0, 0, @state, 0, 0, 0) RETURNING *"),
      resetFile: this.db.prepare("UPDATE usage_files SET dev = @dev, ino = @ino, offset = 0, skipping = 0, state = @state, lines = 0, malformed = 0, oversized = 0 WHERE id = @id"),
      forget: this.db.prepare("DELETE FROM usage_calls WHERE file = ?"),
      keepFile: this.db.prepare("UPDATE usage_files SET offset = @offset, skipping = @skipping, state = @state, lines = @lines, malformed = @malformed, oversized = @oversized WHERE id = @id"),
      sameCall: this.db.prepare("SELECT c.file, c.line, c.sidechain, c.input + c.output + c.cache_read + c.cache_write AS total, f.path FROM usage_calls c JOIN usage_files f ON f.id = c.file WHERE c.dedupe = ?"),
      drop: this.db.prepare("DELETE FROM usage_calls WHERE file = ? AND line = ?"),
      add: this.db.prepare(
        "INSERT OR REPLACE INTO usage_calls VALUES (@file, @line, @agent, @at, @session, @project, @model, @input, @output, @cacheRead, @cacheWrite, @extra, @cost, @costBy, @dedupe, @sidechain)",
      ),
      status: this.db.prepare("SELECT count(*) AS files, coalesce(sum(lines), 0) AS lines, coalesce(sum(malformed), 0) AS malformed, coalesce(sum(oversized), 0) AS oversized FROM usage_files WHERE agent IN (SELECT value FROM json_each(?))"),
    };
  }

  /** Read what each agent's files gained since the last update. */
  update(folders: UsageFolders, bounds: LineBounds = LINE_BOUNDS): void {
    for (const agent of USAGE_AGENTS) {
      const folder = folders[agent];
      if (!folder) continue;
      for (const file of transcriptsOf(folder, USAGE_READERS[agent].files)) this.readFile(agent, folder, file, bounds);
    }
  }

  private readFile(agent: UsageAgent, folder: string, file: string, bounds: LineBounds): void {
    const reader = USAGE_READERS[agent];
    let known = this.statements.file.get(file) as FileRow | undefined;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(file);
    } catch {
      return;
    }
    if (known && known.dev === stat.dev && known.ino === stat.ino && known.offset === stat.size) return;
    let fd: number;
    try {
      // O_NOFOLLOW: a link in the agent's folder is not followed out of it.
      fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    } catch {
      return;
    }
    try {
      stat = fs.fstatSync(fd);
      if (!stat.isFile()) return;
      const state = JSON.stringify(reader.emptyState({ folder, path: file }));
      if (!known) known = this.statements.addFile.get({ path: file, agent, dev: stat.dev, ino: stat.ino, state }) as FileRow;
      else if (known.dev !== stat.dev || known.ino !== stat.ino || stat.size < known.offset) {
        // Another file at its path, or cut short: read again from its start, its calls counted anew.
        const id = known.id;
        this.db.transaction(() => {
          this.statements.forget.run(id);
          this.statements.resetFile.run({ id, dev: stat.dev, ino: stat.ino, state });
        })();
        known = { ...known, dev: stat.dev, ino: stat.ino, offset: 0, skipping: 0, state, lines: 0, malformed: 0, oversized: 0 };
      }
      let position = known;
      while (position.offset < stat.size) {
        const read = readLines(fd, { offset: position.offset, skipping: position.skipping === 1 }, stat.size, bounds);
        let lineState = JSON.parse(position.state) as unknown;
        let malformed = 0;
        const calls: { line: number; call: UsageCall }[] = [];
        read.lines.forEach((text, index) => {
          if (!reader.mayTell(text)) return;
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            malformed++;
            return;
          }
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return;
          const told = reader.readLine(parsed as Json, lineState);
          lineState = told.state;
          for (const call of told.calls) calls.push({ line: position.lines + index, call });
        });
        const next: FileRow = { ...position, offset: read.offset, skipping: read.skipping ? 1 : 0, state: JSON.stringify(lineState), lines: position.lines + read.lines.length, malformed: position.malformed + malformed, oversized: position.oversized + read.oversized };
        const kept = this.db
          .transaction(() => {
            // Another reader (the dashboard, another `reqwatch usage`) read these bytes meanwhile: theirs stand.
            const now = this.statements.file.get(file) as FileRow | undefined;
            if (!now || now.offset !== position.offset || now.ino !== position.ino) return false;
            for (const { line, call } of calls) this.keep(agent, { id: position.id, path: file }, line, call);
            this.statements.keepFile.run(next);
            return true;
          })
          .immediate();
        if (!kept || read.offset === position.offset) return;
        position = next;
        if (read.atEnd) return;
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  /** One call kept, unless it is a call already kept that its agent wrote again (then the rule its reader names picks one). */
  private keep(agent: UsageAgent, file: { id: number; path: string }, line: number, call: UsageCall): void {
    const nothing = call.input + call.output + call.cacheRead + call.cacheWrite + call.extra === 0;
    // A line with no tokens and no cost (Claude Code's <synthetic> error: no call was made) counts nowhere.
    if (nothing && !call.agentCostUsd) return;
    const { dedupe } = call;
    if (dedupe) {
      const kept = this.statements.sameCall.get(dedupe.key) as { file: number; line: number; sidechain: number; total: number; path: string } | undefined;
      if (kept) {
        const total = call.input + call.output + call.cacheRead + call.cacheWrite;
        const sidechain = dedupe.sidechain ? 1 : 0;
        // Claude Code's: a session's own line over a subagent's copy, then the fuller count (a line written while the answer streamed has
        // fewer), then the file first by its path, as ccusage keeps the first it reads: the report is the same whichever file was read first.
        const replace = dedupe.keep === "latest" || kept.sidechain > sidechain || (kept.sidechain === sidechain && (total > kept.total || (total === kept.total && (file.path < kept.path || (file.path === kept.path && line < kept.line)))));
        if (!replace) return;
        this.statements.drop.run(kept.file, kept.line);
      }
    }
    const estimated = call.agentCostUsd === undefined ? estimateCostUsd({ model: call.model ?? undefined, inputTokens: call.input, outputTokens: call.output + call.extra, cacheReadTokens: call.cacheRead, cacheWriteTokens: call.cacheWrite }) : null;
    // With tokens and no model known to the table, its cost is unknown, never $0.
    const cost = call.agentCostUsd ?? estimated;
    this.statements.add.run({
      file: file.id,
      line,
      agent,
      at: call.at,
      session: call.session,
      project: call.project,
      model: call.model,
      input: call.input,
      output: call.output,
      cacheRead: call.cacheRead,
      cacheWrite: call.cacheWrite,
      extra: call.extra,
      cost,
      costBy: call.agentCostUsd !== undefined ? "agent" : cost === null ? null : "table",
      dedupe: dedupe?.key ?? null,
      sidechain: dedupe?.sidechain ? 1 : 0,
    });
  }

  /** The calls summed per slot, agent, model and, for a report by session or project, that. */
  slots(group: "session" | "project" | null, agents: readonly UsageAgent[] = USAGE_AGENTS): SlotRow[] {
    const grp = group ?? "''";
    return this.db
      .prepare(
        `SELECT at / ${SLOT_MS} AS slot, agent, model, ${grp} AS grp, min(project) AS project, count(*) AS calls, sum(input) AS input, sum(output) AS output,
           sum(cache_read) AS cacheRead, sum(cache_write) AS cacheWrite, sum(extra) AS extra, coalesce(sum(cost), 0) AS costUsd,
           sum(cost_by = 'table') AS estimatedCalls, sum(cost IS NULL) AS unpricedCalls, max(at) AS lastAt
         FROM usage_calls WHERE agent IN (SELECT value FROM json_each(?)) GROUP BY 1, 2, 3, 4`,
      )
      .all(JSON.stringify(agents)) as SlotRow[];
  }

  status(agents: readonly UsageAgent[] = USAGE_AGENTS): LedgerStatus {
    return this.statements.status.get(JSON.stringify(agents)) as LedgerStatus;
  }

  close(): void {
    this.db.close();
  }
}
