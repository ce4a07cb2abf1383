import type Database from "better-sqlite3";
import { CALL_SUMS, CALL_TOLD_ONCE, type UsageSums } from "./callSums";
import { LIFECYCLE_ROWS } from "./lifecycleRows";

/** What a session's lifecycles add up to: the sessions list's and a session's page's figures. */
export interface SessionSums extends UsageSums {
  /** Its lifecycles (turns, model calls, messages). */
  requests: number;
  turns: number;
  tools: number;
  firstSeen: number;
  lastSeen: number;
  service: string;
}

const SUMS = `count(*) AS requests, sum(t.kind = 'turn') AS turns, sum(t.calls) AS calls, sum(t.tools) AS tools,
  sum(t.input_tokens) AS inputTokens, sum(t.output_tokens) AS outputTokens, sum(t.cache_read_tokens) AS cacheReadTokens,
  sum(t.cache_write_tokens) AS cacheWriteTokens, sum(t.cost_usd) AS costUsd, sum(t.estimated_calls) AS estimatedCalls, sum(t.unpriced_calls) AS unpricedCalls, min(t.started_at) AS firstSeen, max(t.last_at) AS lastSeen, min(t.service) AS service`;

/** A lifecycle of the session a page names: by the id its rows show (the `otel` source's session expression). */
const SESSION = "reqwatch_name(t.session, 128) = ?";

/** Every stored session id with its sums, grouped by the stored id (its index). */
export function sessionSumsByStoredId(db: Database.Database): (SessionSums & { raw: string })[] {
  return db.prepare(`SELECT t.session AS raw, ${SUMS} FROM lifecycles t WHERE t.session IS NOT NULL GROUP BY t.session`).all() as (SessionSums & {
    raw: string;
  })[];
}

/** The id a stored session id shows as (null: none), as the connection's reqwatch_name gives it. */
export function shownSessionIds(db: Database.Database): (raw: string) => string | null {
  const nameOf = db.prepare("SELECT reqwatch_name(?, 128)").pluck();
  return (raw) => nameOf.get(raw) as string | null;
}

/** One session's sums (`requests` 0 when no lifecycle carries its id). */
export function sessionSums(db: Database.Database, sessionId: string): SessionSums {
  return db.prepare(`SELECT ${SUMS} FROM lifecycles t WHERE ${SESSION}`).get(sessionId) as SessionSums;
}

/** What a session's model calls used, per model, the costliest first; each call once. */
export function sessionByModel(db: Database.Database, sessionId: string): (UsageSums & { model: string })[] {
  return db
    .prepare(
      // Grouped by the call's own model: a bare `model` there would be the lifecycle's column (the turn's model), not this alias.
      `SELECT coalesce(json_extract(p.fields, '$.model'), t.model, '(not said)') AS model, ${CALL_SUMS}
           FROM parts p JOIN lifecycles t ON t.seq = p.seq WHERE p.kind = 'call' AND ${CALL_TOLD_ONCE} AND ${SESSION} GROUP BY 1 ORDER BY costUsd DESC, calls DESC, 1`,
    )
    .all(sessionId) as (UsageSums & { model: string })[];
}

/** A session's tools, the most used first: uses, failures (null when none said), time. */
export function sessionTools(db: Database.Database, sessionId: string): { name: string; uses: number; failed: number | null; durationMs: number }[] {
  return db
    .prepare(
      `SELECT coalesce(json_extract(p.fields, '$.name'), '(not said)') AS name, count(*) AS uses, sum(json_extract(p.fields, '$.success') = 0) AS failed,
             coalesce(sum(json_extract(p.fields, '$.durationMs')), 0) AS durationMs
           FROM parts p JOIN lifecycles t ON t.seq = p.seq WHERE p.kind = 'tool' AND ${SESSION} GROUP BY name ORDER BY uses DESC, name`,
    )
    .all(sessionId) as { name: string; uses: number; failed: number | null; durationMs: number }[];
}

/** A session's lifecycles that failed or carry an error now, newest first, at most `limit`. */
export function sessionErrors(db: Database.Database, sessionId: string, limit: number): Record<string, unknown>[] {
  return db
    .prepare(
      `SELECT t.seq AS _id, t.kind, t.state, t.error, coalesce(t.finished_at, t.last_at) AS at FROM lifecycles t WHERE ${SESSION} AND (t.state = 'failed' OR t.error IS NOT NULL) ORDER BY at DESC LIMIT ?`,
    )
    .all(sessionId, limit) as Record<string, unknown>[];
}

/** The lifecycles in `states` (few, by the state index), of one session or all, with what the stuck rule reads, newest first. */
export function liveLifecycles(db: Database.Database, states: readonly string[], sessionId?: string): Record<string, unknown>[] {
  const placeholders = states.map(() => "?").join(", ");
  const sql = `SELECT t.seq AS _id, reqwatch_name(t.session, 128) AS _session, ${LIFECYCLE_ROWS.facts} FROM lifecycles t WHERE t.state IN (${placeholders})${sessionId === undefined ? "" : " AND reqwatch_name(t.session, 128) = ?"} ORDER BY t.seq DESC`;
  return db.prepare(sql).all(...states, ...(sessionId === undefined ? [] : [sessionId])) as Record<string, unknown>[];
}

/**
 * Where a session's lifecycles came from: received over OpenTelemetry (a step of a log record or a
 * span), read from an agent's own files (a step of a line, lib/telemetry/agentFiles), or both.
 */
export function sessionToldBy(db: Database.Database, sessionId: string): { received: boolean; files: boolean } {
  const told = (keys: string) =>
    db.prepare(`SELECT 1 FROM lifecycles t JOIN steps s ON s.seq = t.seq WHERE ${SESSION} AND (${keys}) LIMIT 1`).get(sessionId) !== undefined;
  return { received: told("s.step_key LIKE 'log:%' OR s.step_key LIKE 'span:%'"), files: told("s.step_key LIKE 'line:%' OR s.step_key LIKE 'ended:%'") };
}
