"use client";

import type { RequestRow } from "@/lib/views/requestsView";

/** Rows a person can retry from the table: the states the transition table sends back to queued, when failed, timed out or stuck. */
function retryable(row: RequestRow): boolean {
  return row.state === "failed" || row.state === "timeout" || (row.state === "processing" && row.stuckReason !== null);
}

/** Stuck rows that are waiting for a worker (or held by none): the table offers to cancel them. */
function cancellable(row: RequestRow): boolean {
  return row.stuckReason !== null && (row.state === "created" || row.state === "queued");
}

/** A row's own actions: retry, cancel, and delete for a source's left-over message. */
export function RowActions({
  row,
  onRetry,
  onCancel,
  onDelete,
  noActions,
}: {
  row: RequestRow;
  onRetry: (id: string) => void;
  onCancel: (id: string) => void;
  onDelete?: (id: string) => void;
  noActions: string | null;
}) {
  return (
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
  );
}
