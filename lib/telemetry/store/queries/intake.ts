import type Database from "better-sqlite3";
import type { Signal } from "../../records";

export interface IntakeRow {
  signal: Signal;
  exports: number;
  records: number;
  rejected: number;
  lastAt: number;
}

/** What each signal's exports brought, and what was rejected of them. */
export function storeIntake(db: Database.Database): IntakeRow[] {
  return (db.prepare("SELECT signal, exports, records, rejected, last_at AS lastAt FROM intake ORDER BY signal").all() as IntakeRow[]).map((row) => ({
    ...row,
  }));
}
