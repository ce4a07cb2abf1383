"use client";

import { useState } from "react";
import { DEFAULT_QUERY, requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";
import type { WorkspaceMatch } from "@/lib/model/activity";
import { ActivityCharts } from "../charts/ActivityCharts";

/** The charts for the table's workspace filter, drawn (and fetched) only once opened. */
export function FilterActivity({ query }: { query: RequestQuery }) {
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
