import Link from "next/link";
import type { RequestSummary } from "@/lib/index/queries/listRequests";
import { formatAgo, formatDuration } from "@/lib/duration";
import { StateBadge } from "./StateBadge";

/** The most recently updated requests. Text from request files is rendered as text, never as HTML. */
export function RecentRequestsTable({ requests, now }: { requests: RequestSummary[]; now: number }) {
  return (
    <table aria-label="Recent requests">
      <thead>
        <tr>
          <th scope="col">Request</th>
          <th scope="col">Workspace</th>
          <th scope="col">Session</th>
          <th scope="col">State</th>
          <th scope="col">In state</th>
          <th scope="col">Attempt</th>
          <th scope="col">Model</th>
          <th scope="col">Tokens</th>
          <th scope="col">Updated</th>
        </tr>
      </thead>
      <tbody>
        {requests.map((request) => (
          <tr key={request.requestId}>
            <td className="id" title={request.requestId}><Link href={`/requests/${encodeURIComponent(request.requestId)}`}>{request.requestId}</Link></td>
            <td>{request.workspace}</td>
            <td>{request.sessionId ?? "—"}</td>
            <td><StateBadge state={request.state} /></td>
            <td className="num" suppressHydrationWarning>{formatDuration(Math.max(0, now - request.stateSince))}</td>
            <td className="num">{request.attempt ?? "—"}</td>
            <td>{request.model ?? "—"}</td>
            <td className="num">{request.tokens ?? "—"}</td>
            <td className="num" title={new Date(request.lastUpdatedAt).toISOString()} suppressHydrationWarning>{formatAgo(request.lastUpdatedAt, now)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
