import { ReqwatchError } from "../model/errors";
import { redactRequest, type Redaction } from "../model/redaction";
import type { RequestRecord } from "../model/requestFormat";
import { stateEnteredAt } from "../model/transition";
import type { PgQueryable } from "./pgDriver";
import { CHANGES_CHANNEL } from "./resultWaits";

/**
 * Write a new version: the row, its new history steps (the feed, in position order), the end of
 * a claim it leaves, and the announcement, all in the caller's transaction. Secrets in the new
 * text are redacted first, as the local store does.
 */
export async function saveVersion(client: PgQueryable, redaction: Redaction, current: RequestRecord | null, decided: RequestRecord): Promise<RequestRecord> {
  const next = redactRequest(redaction, current, decided);
  const row = [
    next.requestId,
    next.workspace,
    next.state,
    next.createdAt,
    next.lastUpdatedAt,
    stateEnteredAt(next),
    next.notBefore ?? null,
    // A request file another program wrote may carry no version: its first.
    next.version ?? 0,
    next,
  ];
  if (current) {
    await client.query(
      `UPDATE requests SET workspace = $2, state = $3, created_at = $4, last_updated_at = $5, state_since = $6, not_before = $7, version = $8, record = $9
        WHERE request_id = $1`,
      row,
    );
  } else {
    // Another process creating the same id at once: the key refuses the second.
    const { rowCount } = await client.query(
      `INSERT INTO requests (request_id, workspace, state, created_at, last_updated_at, state_since, not_before, version, record)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (request_id) DO NOTHING`,
      row,
    );
    if (rowCount !== 1) throw new ReqwatchError("ALREADY_EXISTS", `Request ${next.requestId} already exists.`);
  }
  const steps = (next.transitions ?? []).slice(current?.transitions?.length ?? 0);
  let position = "0";
  for (const step of steps) {
    const { rows } = await client.query<{ position: string }>(
      "INSERT INTO transitions (request_id, from_state, to_state, at, token, dropped, entry) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING position",
      [next.requestId, step.from, step.to, step.at, step.token ?? null, step.dropped === true, step],
    );
    position = rows[0]!.position;
  }
  const endedClaim = current?.claim?.token;
  if (endedClaim && next.claim?.token !== endedClaim) {
    await client.query("UPDATE claims SET ended_at = $2, ended_state = $3 WHERE token = $1 AND ended_at IS NULL", [endedClaim, next.lastUpdatedAt, next.state]);
  }
  await client.query("SELECT pg_notify($1, $2)", [
    CHANGES_CHANNEL,
    JSON.stringify({ position: Number(position), requestId: next.requestId, state: next.state }),
  ]);
  return next;
}
