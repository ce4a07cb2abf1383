import type { RequestRecord } from "../../schema";
import type { IndexDb } from "../openIndex";

export function getRequest(db: IndexDb, requestId: string): RequestRecord | null {
  const doc = db.prepare("SELECT doc FROM requests WHERE id = ?").pluck().get(requestId) as string | undefined;
  return doc === undefined ? null : (JSON.parse(doc) as RequestRecord);
}
