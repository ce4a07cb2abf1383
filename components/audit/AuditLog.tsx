"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import type { AuditEntry } from "@/lib/db/auditLog";
import { formatDuration } from "@/lib/model/duration";
import { useDashboard, usePollInterval } from "../data/LiveFeed";
import { ActionDialog } from "../actions/ActionDialog";
import { auditListOptions } from "../data/queries";
import { When } from "../Clock";
import { TableHead } from "../TableHead";

/** Undo a cleanup, through the same dry run and confirmation as any action; off while an undo of it runs. */
function UndoButton({ entry, undoing, onUndo }: { entry: AuditEntry; undoing: boolean; onUndo: () => void }) {
  const { readOnly } = useDashboard();
  return (
    <button
      type="button"
      onClick={onUndo}
      disabled={readOnly !== null || undoing}
      title={readOnly ?? (undoing ? "An undo of this cleanup is running." : undefined)}
      aria-label={`Undo #${entry.id}`}
    >
      {undoing ? "Undoing…" : "Undo"}
    </button>
  );
}

/** The requests an action changed, as links (for a cleanup, what its undo restores). */
function ChangedIds({ ids }: { ids: string[] }) {
  if (!ids.length) return null;
  return (
    <details>
      <summary className="muted">{ids.length} changed</summary>
      <ul className="ids" aria-label="Changed requests">
        {ids.slice(0, 200).map((id) => (
          <li key={id}>
            <Link href={`/requests/${encodeURIComponent(id)}`} prefetch={false}>
              {id}
            </Link>
          </li>
        ))}
        {ids.length > 200 && <li className="muted">and {ids.length - 200} more</li>}
      </ul>
    </details>
  );
}

/** The audit log, newest first; refreshes while an action runs. */
export function AuditLog({ initial }: { initial: AuditEntry[] }) {
  const pollMs = usePollInterval();
  const { data: entries } = useQuery({
    ...auditListOptions(),
    initialData: initial,
    refetchInterval: (query) => (query.state.data?.some((e) => e.status === "running") ? 500 : pollMs),
  });
  // The cleanup whose undo dialog is open (outside the table) until the person closes it. Its button
  // says "Undoing…" only once an undo runs: opening the dry run changes nothing.
  const [dialogFor, setDialogFor] = useState<number | null>(null);
  if (!entries.length) return <p className="empty">No actions yet. Retries, cancels and cleanups from the dashboard are listed here.</p>;
  return (
    <>
      <table aria-label="Audit log">
        <TableHead columns={["#", "When", "Action", "Status", "Matched", "Changed", "Skipped", "Undo"]} />
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-entry-id={entry.id}>
              <td className="num">{entry.id}</td>
              <td className="num">
                <When at={entry.startedAt} />
                {entry.finishedAt !== null && <div className="muted">took {formatDuration(entry.finishedAt - entry.startedAt)}</div>}
              </td>
              <td style={{ whiteSpace: "normal" }}>
                {entry.summary}
                <div className="muted">by {entry.by}</div>
                {entry.skipReasons.map((skip) => (
                  <div key={skip.reason} className="muted">
                    {skip.count} skipped: {skip.reason}
                  </div>
                ))}
                {entry.error && <div className="error-text">{entry.error}</div>}
                <ChangedIds ids={entry.changedIds} />
              </td>
              <td>{entry.status === "running" ? `running (${entry.changed + entry.skipped} of ${entry.matched})` : entry.status}</td>
              <td className="num">{entry.matched}</td>
              <td className="num">{entry.changed}</td>
              <td className="num">{entry.skipped}</td>
              <td>
                {entry.undoneBy !== null ? (
                  <span className="muted">undone by #{entry.undoneBy}</span>
                ) : entry.kind === "cleanup" && entry.status !== "running" && entry.changed > 0 ? (
                  <UndoButton
                    entry={entry}
                    undoing={entries.some((e) => e.kind === "undo" && e.undoes === entry.id && e.status === "running")}
                    onUndo={() => setDialogFor(entry.id)}
                  />
                ) : entry.undoes !== null ? (
                  <span className="muted">undid #{entry.undoes}</span>
                ) : (
                  "—"
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {dialogFor !== null && <ActionDialog input={{ kind: "undo", entry: dialogFor }} onClose={() => setDialogFor(null)} />}
    </>
  );
}
