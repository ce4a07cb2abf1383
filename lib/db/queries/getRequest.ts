import type { RequestRecord } from "../../model/requestFormat";
import { assertRequestId } from "../../model/ids";
import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

export function getRequest(db: IndexDb, requestId: string): RequestRecord | null {
  assertRequestId(requestId);
  const doc = statement(db, "SELECT doc FROM requests WHERE id = ?").pluck().get(requestId) as string | undefined;
  return doc === undefined ? null : (JSON.parse(doc) as RequestRecord);
}
