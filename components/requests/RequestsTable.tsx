"use client";

import { useEffect } from "react";
import type { RequestRow } from "@/lib/views/requestsView";
import { useNow } from "../data/useNow";
import { TableHead } from "../TableHead";
import { usePausedWorkspaces } from "../queues/Queues";
import { RequestTableRow } from "./RequestTableRow";

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
            <RequestTableRow
              key={row.requestId}
              row={row}
              current={row.requestId === current}
              now={now}
              paused={paused.has(row.workspace)}
              select={selection ? { checked: selected.has(row.requestId), onToggle: (on) => toggle(row.requestId, on) } : null}
              actions={selection ? { onRetry, onCancel, onDelete, noActions } : null}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}
