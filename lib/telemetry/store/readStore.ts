import type Database from "better-sqlite3";
import { ReqwatchError } from "../../model/errors";
import { openSourceDb, sourceReadError } from "../../sqlite/openSourceDb";

/** The telemetry store, opened to read; a store that does not exist yet is said as such: nothing was received. */
export function openTelemetryStore(file: string, busyMs?: number): Database.Database {
  try {
    return openSourceDb(file, "telemetry store", busyMs === undefined ? {} : { busyMs });
  } catch (error) {
    if (error instanceof ReqwatchError && error.code === "NOT_FOUND") {
      throw new ReqwatchError(
        "NOT_FOUND",
        `Nothing was received for this state folder yet: the dashboard keeps what its OpenTelemetry receiver gets in ${file} (see the README's "See Claude Code and other OpenTelemetry apps").`,
        { file },
      );
    }
    throw error;
  }
}

/**
 * Read the store once and close it; `empty` when nothing was received yet (no store is made for
 * it), or when the store is damaged: the receiver sets it aside and starts a new one (Health names
 * it), and what reads it (a page, the sessions list) goes on meanwhile.
 */
export function readTelemetryStore<T>(file: string, empty: T, read: (db: Database.Database) => T): T {
  let db: Database.Database;
  try {
    db = openTelemetryStore(file);
  } catch (error) {
    if (error instanceof ReqwatchError && (error.code === "NOT_FOUND" || error.code === "CORRUPT_FILE")) return empty;
    throw error;
  }
  try {
    return read(db);
  } catch (error) {
    if (sourceReadError(error, file, "telemetry store").code === "CORRUPT_FILE") return empty;
    throw error;
  } finally {
    db.close();
  }
}
