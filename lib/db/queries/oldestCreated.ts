import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** When the oldest request indexed was created (one step down requests_by_created), or null when there is none. */
export function oldestCreatedAt(db: IndexDb): number | null {
  return (statement(db, "SELECT min(created_at) FROM requests").pluck().get() as number | null) ?? null;
}
