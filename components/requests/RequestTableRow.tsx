"use client";

import Link from "next/link";
import { formatDuration } from "@/lib/model/duration";
import { hasSessions } from "@/lib/model/sessionSource";
import type { RequestRow } from "@/lib/views/requestsView";
import { When } from "../Clock";
import { Cut } from "../Cut";
import { StateBadge } from "../StateBadge";
import { sourceRowPath } from "../sources/sourcePaths";
import { sessionPath } from "../sessions/sessionPath";
import { RowActions } from "./RowActions";

/** One request in the requests table; `select` and `actions` only where the table offers them. */
export function RequestTableRow({
  row,
  current,
  now,
  paused,
  select,
  actions,
}: {
  row: RequestRow;
  /** The keyboard's current row. */
  current: boolean;
  now: number;
  /** Its workspace is paused. */
  paused: boolean;
  select: { checked: boolean; onToggle: (on: boolean) => void } | null;
  actions: { onRetry: (id: string) => void; onCancel: (id: string) => void; onDelete?: (id: string) => void; noActions: string | null } | null;
}) {
  return (
    <tr
      className={[row.stuckReason && "stuck", current && "current"].filter(Boolean).join(" ") || undefined}
      aria-current={current ? "true" : undefined}
      data-request-id={row.requestId}
    >
      {select && (
        <td>
          <input type="checkbox" aria-label={`Select ${row.requestId}`} checked={select.checked} onChange={(event) => select.onToggle(event.target.checked)} />
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
        {!row.source && row.state === "queued" && paused && <div className="muted">paused: workspace {row.workspace} takes no claims until resumed</div>}
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
      {actions && <RowActions row={row} {...actions} />}
    </tr>
  );
}
