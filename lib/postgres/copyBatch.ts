import type { Redaction } from "../model/redaction";
import type { RequestRecord } from "../model/requestFormat";
import type { PgQueryable } from "./pgDriver";
import { saveVersion } from "./saveVersion";

/** What one batch of a copy did: each request copied, already there at the same version, or there at another (left as it is). */
export interface CopiedBatch {
  copied: string[];
  alreadyThere: string[];
  conflicts: { requestId: string; reason: string }[];
}

/**
 * Write a batch of requests, each with its whole history, into the shared store, in the caller's
 * transaction. A request already there at the same version is skipped (a copy run again after a
 * kill), one at another version is left alone and reported. A live claim comes with its request,
 * so the monitor takes it back once its heartbeat is older than the timeout.
 */
export async function copyBatchIn(client: PgQueryable, redaction: Redaction, records: readonly RequestRecord[]): Promise<CopiedBatch> {
  const done: CopiedBatch = { copied: [], alreadyThere: [], conflicts: [] };
  const { rows } = await client.query<{ request_id: string; version: number }>("SELECT request_id, version FROM requests WHERE request_id = ANY($1)", [
    records.map((record) => record.requestId),
  ]);
  const there = new Map(rows.map((row) => [row.request_id, row.version]));
  for (const record of records) {
    const version = there.get(record.requestId);
    if (version === (record.version ?? 0)) done.alreadyThere.push(record.requestId);
    else if (version !== undefined) {
      done.conflicts.push({
        requestId: record.requestId,
        reason: `the store holds version ${version}, the source version ${record.version ?? 0}: left as it is`,
      });
    } else {
      await saveVersion(client, redaction, null, record);
      const claim = record.state === "processing" ? record.claim : null;
      if (claim) {
        await client.query(
          `INSERT INTO claims (token, request_id, attempt, worker, host, pid, claimed_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (token) DO NOTHING`,
          [
            claim.token,
            record.requestId,
            record.attempt ?? 1,
            "copied",
            claim.host ?? "unknown",
            claim.pid ?? 0,
            claim.claimedAt ?? record.lastUpdatedAt,
            claim.heartbeatAt ?? claim.claimedAt ?? record.lastUpdatedAt,
          ],
        );
      }
      done.copied.push(record.requestId);
    }
  }
  return done;
}

/** Up to `limit` requests after `afterId` in id order, each whole: a copy reads the store in such batches. */
export async function requestsAfter(db: PgQueryable, afterId: string, limit: number): Promise<RequestRecord[]> {
  const { rows } = await db.query<{ record: RequestRecord }>("SELECT record FROM requests WHERE request_id > $1 ORDER BY request_id LIMIT $2", [
    afterId,
    limit,
  ]);
  return rows.map((row) => row.record);
}
