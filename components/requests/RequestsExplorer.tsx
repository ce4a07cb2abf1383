"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useMemo, useState } from "react";
import type { ActionRequest } from "../data/queries";
import { DEFAULT_QUERY, parseRequestQuery, requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";
import type { ExportFormat } from "@/lib/views/exportRows";
import type { RequestsView } from "@/lib/views/requestsView";
import { ActionDialog } from "../actions/ActionDialog";
import { WorkspacePauseButton } from "../queues/Queues";
import { TableKeysHelp, useTableKeys } from "./TableKeys";
import { CleanupButton } from "../actions/CleanupButton";
import { useDashboard, usePollInterval } from "../data/LiveFeed";
import { requestListOptions, sourcesOptions } from "../data/queries";
import type { SourceStatus } from "@/lib/sources/liveSource";
import { sourceRowPath } from "../sources/sourcePaths";
import { SourceLine } from "../sources/SourcesTable";
import { SourceActionDialog } from "../sources/SourceActionDialog";
import type { SourceActionKind } from "@/lib/sources/sourceActions";
import { EmptyState } from "../EmptyState";
import { RequestFilters } from "./RequestFilters";
import { RequestsTable } from "./RequestsTable";
import { ActivityCharts } from "../charts/ActivityCharts";
import type { WorkspaceMatch } from "@/lib/model/activity";

function queryFrom(params: URLSearchParams): RequestQuery {
  try {
    return parseRequestQuery(params);
  } catch {
    return DEFAULT_QUERY;
  }
}

/** The charts for the table's workspace filter, drawn (and fetched) only once opened. */
function FilterActivity({ query }: { query: RequestQuery }) {
  const [open, setOpen] = useState(false);
  // Both filters (a hand-made URL): the table holds the named workspace if the prefix matches it, else nothing.
  const match: WorkspaceMatch | "none" = query.workspace
    ? query.workspacePrefix === undefined || query.workspace.startsWith(query.workspacePrefix)
      ? { workspace: query.workspace }
      : "none"
    : query.workspacePrefix
      ? { workspacePrefix: query.workspacePrefix }
      : null;
  const others =
    requestQueryParams({ ...query, workspace: undefined, workspacePrefix: undefined, cursor: undefined, sort: DEFAULT_QUERY.sort, order: DEFAULT_QUERY.order })
      .size > 0;
  return (
    <details className="filter-activity" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Activity charts{match ? " for this workspace filter" : ""}</summary>
      {open &&
        (match === "none" ? (
          <p className="muted">No workspace matches both workspace filters.</p>
        ) : (
          <ActivityCharts match={match} note={others ? "The charts follow the workspace filter only." : undefined} />
        ))}
    </details>
  );
}

/** The live requests table: filters in the URL, keyset pages, selection and bulk actions. */
export function RequestsExplorer({
  initialKey,
  initialView,
  isEmpty,
  initialSources,
}: {
  initialKey: string;
  initialView: RequestsView;
  isEmpty: boolean;
  initialSources: SourceStatus[];
}) {
  const pathname = usePathname();
  const searchParams = useSearchParams();
  const urlQuery = useMemo(() => queryFrom(new URLSearchParams(searchParams.toString())), [searchParams]);
  // The view follows a click at once and the URL follows the view; a change of URL from outside
  // (back, forward, a link) resets the view (derived state, set during render as React advises).
  // The server's view at first: it may have left out what it could not show (a cursor of another sort, a source it does not read), and said so.
  const [query, setQuery] = useState(() => queryFrom(new URLSearchParams(initialKey)));
  const [seenUrlQuery, setSeenUrlQuery] = useState(urlQuery);
  if (urlQuery !== seenUrlQuery) {
    setSeenUrlQuery(urlQuery);
    setQuery(urlQuery);
  }
  const key = requestQueryParams(query).toString();
  const pollMs = usePollInterval();
  const { readOnly } = useDashboard();
  const list = useQuery({
    ...requestListOptions(query),
    initialData: key === initialKey ? initialView : undefined,
    placeholderData: keepPreviousData,
    refetchInterval: pollMs,
  });
  const { data: sources = initialSources } = useQuery({ ...sourcesOptions(), initialData: initialSources });
  const source = query.source ? sources.find((candidate) => candidate.name === query.source) : undefined;
  // Another program's queue is read, never acted on: every action says so.
  const noActions = query.source
    ? source?.writable
      ? null
      : `${query.source} is another program's queue, read only here: to retry and delete where its own recovery does the same, start the dashboard with --source <source>?write=1 (claude-mem only).`
    : readOnly;
  // Received telemetry and a mapped SQLite table can never be acted on (only claude-mem's left-overs can be opened for writing): no action is offered, not even a disabled one.
  const neverActs = query.source !== undefined && source !== undefined && source.kind !== "claude-mem";
  const [sourceAction, setSourceAction] = useState<{ kind: SourceActionKind; ids: string[] } | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [action, setAction] = useState<ActionRequest | null>(null);
  const [history, setHistory] = useState<string[]>([]);

  const navigate = (next: RequestQuery) => {
    setSelected(new Set());
    const params = requestQueryParams(next).toString();
    // The native History API: Next keeps useSearchParams in step without a server round trip,
    // so a filter change costs one fetch of the table's page, not a re-render of the whole route.
    setQuery(next);
    window.history.replaceState(null, "", params ? `${pathname}?${params}` : pathname);
  };
  const setFilters = (next: RequestQuery) => {
    setHistory([]);
    navigate({ ...next, cursor: undefined });
  };

  const view = list.data;
  const router = useRouter();
  const keys = useTableKeys({
    rowIds: view?.items.map((row) => row.requestId) ?? [],
    open: (id) => router.push(query.source ? sourceRowPath(query.source, id) : `/requests/${encodeURIComponent(id)}`),
    toggle: (id) =>
      setSelected((current) => {
        const next = new Set(current);
        if (!next.delete(id)) next.add(id);
        return next;
      }),
    retry: (current) => {
      const ids = selected.size ? [...selected] : current ? [current] : [];
      if (!ids.length || noActions !== null) return false;
      if (query.source) setSourceAction({ kind: "retry", ids });
      else setAction({ kind: "retry", ids });
      return true;
    },
    focusSearch: () => document.getElementById("filter-search")?.focus(),
  });
  // Every request the filters match, every page: the server streams it (lib/dashboard/exportStream.ts).
  const exportUrl = (format: ExportFormat) =>
    `/api/export?${new URLSearchParams([["format", format], ...requestQueryParams({ ...query, cursor: undefined })]).toString()}`;

  if (isEmpty && !sources.length && view && view.items.length === 0 && !key) return <EmptyState />;

  return (
    <>
      <RequestFilters query={query} onChange={setFilters} sources={sources} />
      {source && <SourceLine source={source} />}
      <div className="toolbar" role="toolbar" aria-label="Bulk actions">
        {neverActs ? (
          <span className="muted">
            {source.kind === "otel"
              ? "Received telemetry is shown as it was sent: nothing here is retried or deleted."
              : `${source.name} is shown as its owner keeps it: nothing here is retried or deleted.`}
          </span>
        ) : (
          <>
            <button
              type="button"
              disabled={noActions !== null || selected.size === 0}
              title={noActions ?? undefined}
              onClick={() => (query.source ? setSourceAction({ kind: "retry", ids: [...selected] }) : setAction({ kind: "retry", ids: [...selected] }))}
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
                  onClick={() => setSourceAction({ kind: "delete", ids: [...selected] })}
                >
                  Delete selected ({selected.size})
                </button>
              )
            ) : (
              <button
                type="button"
                disabled={noActions !== null || !view || view.items.length === 0}
                title={noActions ?? undefined}
                onClick={() => setAction({ kind: "retry", query: requestQueryParams({ ...query, cursor: undefined }).toString() })}
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
        {list.isFetching && <span className="muted">updating…</span>}
        {!query.source && (
          <>
            <a className="button" href={exportUrl("csv")} download>
              Export CSV
            </a>
            <a className="button" href={exportUrl("jsonl")} download>
              Export JSON Lines
            </a>
          </>
        )}
        {list.error && (
          <span className="error-text" role="alert">
            {list.error.message}
          </span>
        )}
      </div>
      {view && view.items.length > 0 ? (
        <RequestsTable
          rows={view.items}
          current={keys.current}
          selection={
            neverActs
              ? undefined
              : query.source
                ? {
                    selected,
                    onSelect: setSelected,
                    onRetry: (id) => setSourceAction({ kind: "retry", ids: [id] }),
                    onCancel: () => {},
                    onDelete: (id) => setSourceAction({ kind: "delete", ids: [id] }),
                    noActions,
                  }
                : {
                    selected,
                    onSelect: setSelected,
                    onRetry: (id) => setAction({ kind: "retry", ids: [id] }),
                    onCancel: (id) => setAction({ kind: "cancel", ids: [id] }),
                    noActions,
                  }
          }
        />
      ) : (
        <p className="empty">No requests match these filters.</p>
      )}
      <div className="pager">
        <button
          type="button"
          disabled={!query.cursor}
          onClick={() => {
            setHistory([]);
            navigate({ ...query, cursor: undefined });
          }}
        >
          First page
        </button>
        <button
          type="button"
          disabled={!history.length}
          onClick={() => {
            const previous = history.slice(0, -1);
            setHistory(previous);
            navigate({ ...query, cursor: history.at(-1) || undefined });
          }}
        >
          Previous page
        </button>
        <button
          type="button"
          disabled={!view?.nextCursor}
          onClick={() => {
            setHistory([...history, query.cursor ?? ""]);
            navigate({ ...query, cursor: view!.nextCursor! });
          }}
        >
          Next page
        </button>
      </div>
      <p className="muted keys-hint">
        Press <kbd>?</kbd> for the keyboard.
      </p>
      {!query.source && <FilterActivity query={query} />}
      {keys.help && <TableKeysHelp onClose={keys.closeHelp} />}
      {sourceAction && query.source && (
        <SourceActionDialog
          source={query.source}
          kind={sourceAction.kind}
          ids={sourceAction.ids}
          onClose={() => {
            setSourceAction(null);
            setSelected(new Set());
          }}
        />
      )}
      {action && (
        <ActionDialog
          input={action}
          onClose={() => {
            setAction(null);
            setSelected(new Set());
          }}
        />
      )}
    </>
  );
}
