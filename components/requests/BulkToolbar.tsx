"use client";

import type { ActionRequest } from "../data/queries";
import { requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";
import type { ExportFormat } from "@/lib/views/exportRows";
import type { SourceStatus } from "@/lib/sources/liveSource";
import type { SourceActionKind } from "@/lib/sources/sourceActions";
import { WorkspacePauseButton } from "../queues/Queues";
import { CleanupButton } from "../actions/CleanupButton";

/** Every request the filters match, every page: the server streams it (lib/dashboard/exportStream.ts). */
const exportUrl = (query: RequestQuery, format: ExportFormat) =>
  `/api/export?${new URLSearchParams([["format", format], ...requestQueryParams({ ...query, cursor: undefined })]).toString()}`;

/** The bulk actions above the requests table, what is being fetched, the exports and the last error. */
export function BulkToolbar({
  query,
  source,
  keptAsSent,
  noActions,
  selected,
  hasRows,
  fetching,
  error,
  onAction,
  onSourceAction,
}: {
  query: RequestQuery;
  source: SourceStatus | undefined;
  /** The source when it can never be acted on (received telemetry, a mapped table): no action is offered. */
  keptAsSent: SourceStatus | null;
  noActions: string | null;
  selected: Set<string>;
  hasRows: boolean;
  fetching: boolean;
  error: Error | null;
  onAction: (action: ActionRequest) => void;
  onSourceAction: (action: { kind: SourceActionKind; ids: string[] }) => void;
}) {
  return (
    <div className="toolbar" role="toolbar" aria-label="Bulk actions">
      {keptAsSent ? (
        <span className="muted">
          {keptAsSent.kind === "otel"
            ? "Received telemetry is shown as it was sent: nothing here is retried or deleted."
            : `${keptAsSent.name} is shown as its owner keeps it: nothing here is retried or deleted.`}
        </span>
      ) : (
        <>
          <button
            type="button"
            disabled={noActions !== null || selected.size === 0}
            title={noActions ?? undefined}
            onClick={() => (query.source ? onSourceAction({ kind: "retry", ids: [...selected] }) : onAction({ kind: "retry", ids: [...selected] }))}
          >
            Retry selected ({selected.size})
          </button>
          {query.source ? (
            source?.retired && (
              <button
                type="button"
                className="danger"
                disabled={noActions !== null || selected.size === 0}
                title={noActions ?? undefined}
                onClick={() => onSourceAction({ kind: "delete", ids: [...selected] })}
              >
                Delete selected ({selected.size})
              </button>
            )
          ) : (
            <button
              type="button"
              disabled={noActions !== null || !hasRows}
              title={noActions ?? undefined}
              onClick={() => onAction({ kind: "retry", query: requestQueryParams({ ...query, cursor: undefined }).toString() })}
            >
              Retry all matching
            </button>
          )}
          {!query.source && <CleanupButton />}
          {!query.source && (query.workspace ?? query.workspacePrefix) && <WorkspacePauseButton workspace={(query.workspace ?? query.workspacePrefix)!} />}
          {noActions && (
            <span className="muted">
              {query.source ? "Actions are off: this source is read only here." : "Actions are off: this folder is observed read-only."}
            </span>
          )}
        </>
      )}
      <span className="spacer" />
      {fetching && <span className="muted">updating…</span>}
      {!query.source && (
        <>
          <a className="button" href={exportUrl(query, "csv")} download>
            Export CSV
          </a>
          <a className="button" href={exportUrl(query, "jsonl")} download>
            Export JSON Lines
          </a>
        </>
      )}
      {error && (
        <span className="error-text" role="alert">
          {error.message}
        </span>
      )}
    </div>
  );
}
