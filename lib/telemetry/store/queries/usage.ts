import type Database from "better-sqlite3";
import { shownName } from "../../../model/storedValues";
import { CALL_SUMS, CALL_TOLD_ONCE, type UsageSums } from "./callSums";

export interface Usage {
  /** Per UTC day (`YYYY-MM-DD`) and model, newest day first. */
  byDayAndModel: (UsageSums & { day: string; model: string })[];
  /** Per session, the costliest first, with its prompt turns and tool uses. */
  /** `session` as stored; `sessionId` as its page resolves it (null: it has none). */
  bySession: (UsageSums & { session: string; sessionId: string | null; service: string; turns: number; tools: number; lastAt: number })[];
}

/**
 * Tokens and cost of the model calls kept: per UTC day and model, and per session (the costliest
 * first). Summed over calls (parts), each counted once however many records reported it.
 */
export function storeUsage(db: Database.Database, sessions = 20): Usage {
  const sums = CALL_SUMS;
  const byDayAndModel = db
    .prepare(
      // By the call's own model: a bare `model` in GROUP BY would be the lifecycle's column (its turn's model), not this alias.
      `SELECT strftime('%Y-%m-%d', p.at / 1000, 'unixepoch') AS day, coalesce(json_extract(p.fields, '$.model'), l.model, '(not said)') AS model, ${sums}
       FROM parts p JOIN lifecycles l ON l.seq = p.seq WHERE p.kind = 'call' AND ${CALL_TOLD_ONCE} GROUP BY 1, 2 ORDER BY day DESC, costUsd DESC, 2`,
    )
    .all() as Usage["byDayAndModel"];
  const bySession = db
    .prepare(
      `SELECT l.session AS session, min(l.service) AS service, count(DISTINCT CASE WHEN l.kind = 'turn' THEN l.seq END) AS turns, max(l.last_at) AS lastAt, ${sums},
         (SELECT count(*) FROM parts t JOIN lifecycles s ON s.seq = t.seq WHERE t.kind = 'tool' AND s.session = l.session) AS tools
       FROM lifecycles l JOIN parts p ON p.seq = l.seq AND p.kind = 'call' AND ${CALL_TOLD_ONCE} WHERE l.session IS NOT NULL GROUP BY l.session ORDER BY costUsd DESC, lastAt DESC LIMIT ?`,
    )
    .all(sessions) as Omit<Usage["bySession"][number], "sessionId">[];
  return { byDayAndModel, bySession: bySession.map((row) => ({ ...row, sessionId: shownName(row.session, 128) })) };
}
