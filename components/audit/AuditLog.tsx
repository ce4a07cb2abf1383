"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { AuditEntry } from "@/lib/actions/auditLog";
import { formatDuration } from "@/lib/duration";
import { useDashboard, usePollInterval } from "../data/LiveFeed";
import { auditKeys, auditListOptions, requestKeys, undoAction } from "../data/queries";

function UndoButton({ entry }: { entry: AuditEntry }) {
  const { actionToken, readOnly } = useDashboard();
  const queryClient = useQueryClient();
  const undo = useMutation({
    mutationFn: () => undoAction(actionToken, entry.id),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: auditKeys.all });
      void queryClient.invalidateQueries({ queryKey: requestKeys.all });
    },
  });
  return (
    <>
      <button type="button" onClick={() => undo.mutate()} disabled={readOnly !== null || undo.isPending} title={readOnly ?? undefined} aria-label={`Undo #${entry.id}`}>
        Undo
      </button>
      {undo.error && <span className="error-text" role="alert"> {undo.error.message}</span>}
    </>
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
  if (!entries.length) return <p className="empty">No actions yet. Retries and cleanups from the dashboard are listed here.</p>;
  return (
    <table aria-label="Audit log">
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">When</th>
          <th scope="col">Action</th>
          <th scope="col">Status</th>
          <th scope="col">Matched</th>
          <th scope="col">Changed</th>
          <th scope="col">Skipped</th>
          <th scope="col">Undo</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry.id} data-entry-id={entry.id}>
            <td className="num">{entry.id}</td>
            <td className="num" title={new Date(entry.startedAt).toISOString()}>
              {new Date(entry.startedAt).toLocaleString()}
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
            </td>
            <td>{entry.status === "running" ? `running (${entry.changed + entry.skipped} of ${entry.matched})` : entry.status}</td>
            <td className="num">{entry.matched}</td>
            <td className="num">{entry.changed}</td>
            <td className="num">{entry.skipped}</td>
            <td>
              {entry.undoneBy !== null ? (
                <span className="muted">undone by #{entry.undoneBy}</span>
              ) : entry.kind === "cleanup" && entry.status !== "running" && entry.changed > 0 ? (
                <UndoButton entry={entry} />
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
  );
}
