import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** The request files' total size as last indexed (each row keeps its file's size): the folder's size without a stat of every file. */
export function requestFileBytes(db: IndexDb): number {
  return (statement(db, "SELECT coalesce(sum(file_size), 0) FROM requests").pluck().get() as number) ?? 0;
}
