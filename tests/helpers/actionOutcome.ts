import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { AuditEntry } from "../../lib/db/auditLog";

/**
 * What a bulk action did to each of `ids`, read from the files and the archive (not from the
 * tracker), with every way it can disagree with the audit entry listed as a problem.
 */
export function actionOutcome(
  stateDir: string,
  entry: AuditEntry,
  ids: readonly string[],
  originals: ReadonlyMap<string, string>,
): { changed: number; problems: string[] } {
  const problems: string[] = [];
  const listed = new Set(entry.changedIds);
  if (listed.size !== entry.changed) problems.push(`entry #${entry.id} says ${entry.changed} changed but lists ${listed.size}`);
  if (entry.status === "running") problems.push(`entry #${entry.id} is still running`);
  const archiveFile = path.join(stateDir, "archive.db");
  const archived = new Set<string>();
  if (fs.existsSync(archiveFile)) {
    const db = new Database(archiveFile, { readonly: true });
    // The copies this cleanup archived (an id used again has one per cleanup that took it).
    for (const id of db.prepare("SELECT request_id FROM archived_requests WHERE cleanup_entry = ?").pluck().all(entry.id) as string[]) archived.add(id);
    db.close();
  }
  let changed = 0;
  for (const id of ids) {
    const file = path.join(stateDir, "requests", `${id}.json`);
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
    if (entry.kind === "cleanup") {
      if (text === null && !archived.has(id)) problems.push(`${id} is in neither the files nor the archive`);
      if (text !== null && archived.has(id)) problems.push(`${id} is in both the files and the archive`);
      if (text !== null && text !== originals.get(id)) problems.push(`${id} was kept but its file changed`);
      const gone = text === null && archived.has(id);
      if (gone) changed++;
      if (gone !== listed.has(id)) problems.push(`${id}: ${gone ? "archived" : "kept"}, but the audit entry ${listed.has(id) ? "lists" : "does not list"} it`);
    } else {
      if (text === null) {
        problems.push(`${id} lost its file`);
        continue;
      }
      const request = JSON.parse(text) as { state: string; transitions?: { by?: string }[] };
      const retried = !!request.transitions?.some((t) => t.by === `${entry.by} (action #${entry.id})`);
      if (retried) changed++;
      if (retried && request.state !== "queued") problems.push(`${id} was retried but is ${request.state}`);
      if (!retried && text !== originals.get(id)) problems.push(`${id} was not retried but its file changed`);
      if (retried !== listed.has(id))
        problems.push(`${id}: ${retried ? "retried" : "untouched"}, but the audit entry ${listed.has(id) ? "lists" : "does not list"} it`);
    }
  }
  return { changed, problems };
}

/** Each request file's text, by id: what "wholly before" is compared with. */
export function readOriginals(stateDir: string, ids: readonly string[]): Map<string, string> {
  return new Map(ids.map((id) => [id, fs.readFileSync(path.join(stateDir, "requests", `${id}.json`), "utf8")]));
}
