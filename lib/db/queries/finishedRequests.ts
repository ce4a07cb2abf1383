import type { RequestRecord } from "../../model/requestFormat";
import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** Those of `ids` that have finished (completed, failed or timed out), as recorded. */
export function finishedAmong(db: IndexDb, ids: readonly string[]): RequestRecord[] {
  const docs = statement(db, `SELECT doc FROM requests WHERE id IN (SELECT value FROM json_each(?)) AND state IN ('completed', 'failed', 'timeout')`)
    .pluck()
    .all(JSON.stringify(ids)) as string[];
  return docs.map((doc) => JSON.parse(doc) as RequestRecord);
}
