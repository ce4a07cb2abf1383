import { statement } from "./statements";
import { withWritersLock, type IndexHolder } from "./writeLock";

/** What a bulk action's dry run fixed for its confirmation, kept in the index until `expiresAt`. */
export interface DryRun {
  id: string;
  kind: string;
  /** The arguments it was asked with, in one form: a confirmation must ask the same. */
  asked: string;
  /** What the audit entry of its confirmation says it acts on. */
  summary: string;
  target: unknown;
  /** The requests it matched: its confirmation acts on these and no other. */
  ids: string[];
  /** A cleanup's cutoff. */
  cutoff: number | null;
  expiresAt: number;
}

interface Row {
  id: string;
  kind: string;
  asked: string;
  summary: string;
  target: string;
  ids: string;
  cutoff: number | null;
  expires_at: number;
}

/**
 * Keep a dry run, dropping the expired ones and all but the newest `kept`: a client that makes dry
 * runs and never confirms them cannot grow the index.
 */
export function keepDryRun(index: IndexHolder, dryRun: DryRun, now: number, kept: number): void {
  withWritersLock(index, () => {
    const { db } = index;
    statement(db, "DELETE FROM dry_runs WHERE expires_at <= ?").run(now);
    statement(db, "INSERT INTO dry_runs (id, kind, asked, summary, target, ids, cutoff, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(
      dryRun.id,
      dryRun.kind,
      dryRun.asked,
      dryRun.summary,
      JSON.stringify(dryRun.target),
      JSON.stringify(dryRun.ids),
      dryRun.cutoff,
      dryRun.expiresAt,
    );
    statement(db, "DELETE FROM dry_runs WHERE rowid NOT IN (SELECT rowid FROM dry_runs ORDER BY rowid DESC LIMIT ?)").run(kept);
  });
}

/** A confirmation's dry run: taken, asked with other arguments (and left for the right one), or not known (never made, expired, taken). */
type TakenDryRun = { outcome: "taken"; dryRun: DryRun } | { outcome: "asked-otherwise"; dryRun: DryRun } | { outcome: "unknown" };

/**
 * Take the dry run `id` for a confirmation that asks `asked`: removed in the same transaction that
 * reads it, so two processes never both confirm one dry run.
 */
export function takeDryRun(index: IndexHolder, id: string, asked: string, now: number): TakenDryRun {
  return withWritersLock(index, () => {
    const { db } = index;
    const row = statement(db, "SELECT * FROM dry_runs WHERE id = ? AND expires_at > ?").get(id, now) as Row | undefined;
    if (!row) return { outcome: "unknown" };
    const dryRun: DryRun = {
      id: row.id,
      kind: row.kind,
      asked: row.asked,
      summary: row.summary,
      target: JSON.parse(row.target) as unknown,
      ids: JSON.parse(row.ids) as string[],
      cutoff: row.cutoff,
      expiresAt: row.expires_at,
    };
    if (row.asked !== asked) return { outcome: "asked-otherwise", dryRun };
    statement(db, "DELETE FROM dry_runs WHERE id = ?").run(id);
    return { outcome: "taken", dryRun };
  });
}
