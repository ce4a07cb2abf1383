"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import type { ActionRequest } from "../data/queries";
import { requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";
import type { RequestsView } from "@/lib/views/requestsView";
import { ActionDialog } from "../actions/ActionDialog";
import { TableKeysHelp, useTableKeys } from "./TableKeys";
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
import { BulkToolbar } from "./BulkToolbar";
import { RequestsPager } from "./RequestsPager";
import { FilterActivity } from "./FilterActivity";
import { useRequestQuery } from "./useRequestQuery";

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
  const { query, go } = useRequestQuery(initialKey);
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
    go(next);
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

  if (isEmpty && !sources.length && view && view.items.length === 0 && !key) return <EmptyState />;

  return (
    <>
      <RequestFilters query={query} onChange={setFilters} sources={sources} />
      {source && <SourceLine source={source} />}
      <BulkToolbar
        query={query}
        source={source}
        keptAsSent={neverActs ? source : null}
        noActions={noActions}
        selected={selected}
        hasRows={!!view && view.items.length > 0}
        fetching={list.isFetching}
        error={list.error}
        onAction={setAction}
        onSourceAction={setSourceAction}
      />
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
      <RequestsPager
        onFirst={
          query.cursor
            ? () => {
                setHistory([]);
                navigate({ ...query, cursor: undefined });
              }
            : null
        }
        onPrevious={
          history.length
            ? () => {
                const previous = history.slice(0, -1);
                setHistory(previous);
                navigate({ ...query, cursor: history.at(-1) || undefined });
              }
            : null
        }
        onNext={
          view?.nextCursor
            ? () => {
                setHistory([...history, query.cursor ?? ""]);
                navigate({ ...query, cursor: view.nextCursor! });
              }
            : null
        }
      />
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
