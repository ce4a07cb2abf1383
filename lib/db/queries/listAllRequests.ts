import { LOCK_TIMEOUT_MS, type IndexDb } from "../openIndex";
import type { ResolvedListFilters } from "../../model/listFilters";
import { openDatabase } from "../../sqlite/openDatabase";
import { listRequests } from "./listRequests";
import type { RequestSummary } from "../../types";

/**
 * Every page a filter matches, all read in one read transaction on a connection of its own: WAL
 * gives it the index as it was at the first page, so a request updated meanwhile (which moves in a
 * newest-updated order) is neither skipped nor read twice. Writers are not blocked, but the
 * write-ahead log cannot be checkpointed past the snapshot until it ends: read the pages
 * promptly, and let the generator finish or `return()` it.
 */
export function* listAllRequests(indexFile: string, filters: ResolvedListFilters): Generator<RequestSummary[], void, undefined> {
  // Read-only: a snapshot that wrote would have to become the newest version first.
  const db: IndexDb = openDatabase(indexFile, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${LOCK_TIMEOUT_MS}`);
    db.exec("BEGIN");
    let cursor: string | undefined;
    do {
      const page = listRequests(db, { ...filters, cursor });
      yield page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  } finally {
    if (db.inTransaction) db.exec("ROLLBACK");
    db.close();
  }
}
