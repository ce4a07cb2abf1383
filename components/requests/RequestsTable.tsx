"use client";

import Link from "next/link";
import { useEffect } from "react";
import { formatDuration } from "@/lib/model/duration";
import { When } from "../Clock";
import type { RequestRow } from "@/lib/views/requestsView";
import { useNow } from "../data/useNow";
import { Cut } from "../Cut";
import { StateBadge } from "../StateBadge";
import { TableHead } from "../TableHead";
import { usePausedWorkspaces } from "../queues/Queues";
import { sourceRowPath } from "../sources/sourcePaths";
import { sessionPath } from "../sessions/sessionPath";
import { hasSessions } from "@/lib/model/sessionSource";

/** Rows a person can retry from the table: the states the transition table sends back to queued, when failed, timed out or stuck. */
function retryable(row: RequestRow): boolean {
  return row.state === "failed" || row.state === "timeout" || (row.state === "processing" && row.stuckReason !== null);
}

/** Stuck rows that are waiting for a worker (or held by none): the table offers to cancel them. */
function cancellable(row: RequestRow): boolean {
  return row.stuckReason !== null && (row.state === "created" || row.state === "queued");
}

interface Selection {
  selected: Set<string>;
  onSelect: (next: Set<string>) => void;
  onRetry: (id: string) => void;
  onCancel: (id: string) => void;
  /** A source's left-over message (lib/sources/sourceActions.ts). */
  onDelete?: (id: string) => void;
  /** Why the actions are off (a folder observed read-only, a source not opened for writing), or null. */
  noActions: string | null;
}

/**
 * The requests table (the requests page, with selection and row actions; the overview, without).
 * Text from request files is rendered as text, never as HTML. Its rows are all from one source,
 * which the Source filter names: no column repeats it.
 */
export function RequestsTable({
  rows,
  label = "Requests",
  selection,
  current = null,
}: {
  rows: RequestRow[];
  label?: string;
  selection?: Selection;
  current?: string | null;
}) {
  const now = useNow(1000);
  const paused = usePausedWorkspaces();
  // The keyboard's current row stays in view when it moves (not on every tick of the clock).
  useEffect(() => {
    if (current) document.querySelector(`tr[data-request-id="${CSS.escape(current)}"]`)?.scrollIntoView({ block: "nearest" });
  }, [current]);
  const { selected, onSelect, onRetry, onCancel, onDelete, noActions } = selection ?? {
    selected: new Set<string>(),
    onSelect: () => {},
    onRetry: () => {},
    onCancel: () => {},
    noActions: null,
  };
  const allSelected = rows.length > 0 && rows.every((row) => selected.has(row.requestId));
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    onSelect(next);
  };
  return (
    <div className="table-scroll">
      <table aria-label={label}>
        <TableHead
          columns={[
            ...(selection
              ? [
                  <input
                    key="all"
                    type="checkbox"
                    aria-label="Select all on this page"
                    checked={allSelected}
                    onChange={(event) => onSelect(event.target.checked ? new Set(rows.map((row) => row.requestId)) : new Set())}
                  />,
                ]
              : []),
            "Request",
            "Workspace",
            "Session",
            "State",
            "In state",
            "Attempt",
            "Model",
            "Tokens",
            "Created",
            "Updated",
            ...(selection
              ? [
                  <span key="actions" className="sr-only">
                    Actions
                  </span>,
                ]
              : []),
          ]}
        />
        <tbody>
          {rows.map((row) => (
            <tr
              key={row.requestId}
              className={[row.stuckReason && "stuck", row.requestId === current && "current"].filter(Boolean).join(" ") || undefined}
              aria-current={row.requestId === current ? "true" : undefined}
              data-request-id={row.requestId}
            >
              {selection && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${row.requestId}`}
                    checked={selected.has(row.requestId)}
                    onChange={(event) => toggle(row.requestId, event.target.checked)}
                  />
                </td>
              )}
              <td className="id" title={row.requestId}>
                <Link
                  href={row.source ? sourceRowPath(row.source, row.requestId) : `/requests/${encodeURIComponent(row.requestId)}`}
                  prefetch={false}
                  aria-label={row.requestId}
                >
                  <Cut text={row.requestId} />
                </Link>
              </td>
              <td className="clip" title={row.workspace}>
                {row.workspace}
              </td>
              {/* Another program's session ids are its own: only the folder's and the received ones (otel) have a session page. */}
              <td className="clip" title={row.sessionId ?? undefined}>
                {row.sessionId && (!row.source || hasSessions(row.source)) ? (
                  <Link href={sessionPath({ sessionId: row.sessionId, source: row.source ?? null })} prefetch={false} aria-label={row.sessionId}>
                    <Cut text={row.sessionId} />
                  </Link>
                ) : (
                  (row.sessionId ?? "—")
                )}
              </td>
              <td>
                <StateBadge state={row.state} />
                {row.stuckReason && <div className="why">stuck: {row.stuckReason}</div>}
                {row.note && <div className="muted">{row.note}</div>}
                {!row.source && row.state === "queued" && paused.has(row.workspace) && (
                  <div className="muted">paused: workspace {row.workspace} takes no claims until resumed</div>
                )}
              </td>
              <td className="num" suppressHydrationWarning>
                {formatDuration(Math.max(0, now - row.stateSince))}
              </td>
              <td className="num">{row.attempt ?? "—"}</td>
              <td className="clip" title={row.model ?? undefined}>
                {row.model ?? "—"}
              </td>
              <td className="num">{row.tokens ?? "—"}</td>
              <td className="num">
                <When at={row.createdAt} />
              </td>
              <td className="num">
                <When at={row.lastUpdatedAt} />
              </td>
              {selection && (
                <td className="row-actions">
                  {retryable(row) && (
                    <button
                      type="button"
                      disabled={noActions !== null}
                      title={noActions ?? undefined}
                      onClick={() => onRetry(row.requestId)}
                      aria-label={`Retry ${row.requestId}`}
                    >
                      Retry
                    </button>
                  )}
                  {!row.source && cancellable(row) && (
                    <button
                      type="button"
                      disabled={noActions !== null}
                      title={noActions ?? undefined}
                      onClick={() => onCancel(row.requestId)}
                      aria-label={`Cancel ${row.requestId}`}
                    >
                      Cancel
                    </button>
                  )}
                  {onDelete && row.stuckReason?.startsWith("left over") && (
                    <button
                      type="button"
                      className="danger"
                      disabled={noActions !== null}
                      title={noActions ?? undefined}
                      onClick={() => onDelete(row.requestId)}
                      aria-label={`Delete ${row.requestId}`}
                    >
                      Delete
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
