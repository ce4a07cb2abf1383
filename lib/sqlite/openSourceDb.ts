import fs from "node:fs";
import type Database from "better-sqlite3";
import { openDatabase } from "./openDatabase";
import { isReqwatchError, ReqwatchError } from "../model/errors";
import { shownName, timeOf } from "../model/storedValues";

export type SourceDb = Database.Database;

/**
 * Open another program's SQLite database to read it, never to change it: read-only, the file must
 * exist, and a short busy wait (its owner may be writing now; WAL lets us read beside it). Each
 * failure is a ReqwatchError that says what the file is and what to do.
 */
export function openSourceDb(file: string, what: string, options: { write?: boolean; busyMs?: number } = {}): SourceDb {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new ReqwatchError("NOT_FOUND", `${what}: ${file} does not exist.`, { file });
    throw new ReqwatchError("IO_ERROR", `${what}: cannot read ${file}: ${(error as Error).message}`, { file });
  }
  if (!stat.isFile()) throw new ReqwatchError("BAD_INPUT", `${what}: ${file} is not a file.`, { file });
  let db: SourceDb;
  try {
    // Written only for an action a person asked for (lib/sources/sourceActions.ts), in one short transaction.
    db = openDatabase(file, { readonly: !options.write, fileMustExist: true, timeout: options.busyMs ?? 2000 });
    // What a row shows, computable in SQL, so a filter matches what the page shows (lib/sources/sourceQueue.ts).
    db.function("reqwatch_name", { deterministic: true }, (value: unknown, max: unknown) => shownName(value, Number(max)));
    db.function("reqwatch_time", { deterministic: true }, (value: unknown) => timeOf(value) ?? null);
  } catch (error) {
    if (isReqwatchError(error)) throw error;
    throw new ReqwatchError("IO_ERROR", `${what}: cannot open ${file}: ${(error as Error).message}`, { file }, { cause: error });
  }
  try {
    // A first read: a file that is not SQLite, or a database locked past the busy wait, fails here.
    db.prepare("SELECT count(*) FROM sqlite_master").get();
  } catch (error) {
    db.close();
    throw sourceReadError(error, file, what);
  }
  return db;
}

/** A failed read of a source, as an error a person can act on. */
export function sourceReadError(error: unknown, file: string, what: string): ReqwatchError {
  const code = (error as { code?: string }).code ?? "";
  if (code === "SQLITE_NOTADB") return new ReqwatchError("CORRUPT_FILE", `${what}: ${file} is not an SQLite database.`, { file }, { cause: error });
  if (code === "SQLITE_CORRUPT")
    return new ReqwatchError("CORRUPT_FILE", `${what}: ${file} is damaged (${(error as Error).message}); nothing was changed.`, { file }, { cause: error });
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED")
    return new ReqwatchError("LOCKED", `${what}: ${file} is locked by its owner; try again.`, { file }, { cause: error });
  if (code.startsWith("SQLITE_READONLY"))
    return new ReqwatchError(
      "FORBIDDEN",
      `${what}: ${file} cannot be written (${(error as Error).message}): check its permissions; nothing was changed.`,
      { file },
      { cause: error },
    );
  return new ReqwatchError("IO_ERROR", `${what}: cannot read ${file}: ${(error as Error).message}`, { file }, { cause: error });
}
