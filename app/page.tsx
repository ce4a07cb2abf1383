import Link from "next/link";
import { getQueues, getRecoveryNotice, getLastStuck, getTracker } from "@/app/_routes/runtime";
import { LiveRecentRequests, LiveStateCounts } from "@/components/overview/LiveOverview";
import { ActivityCharts } from "@/components/charts/ActivityCharts";
import { activityView } from "@/lib/views/activityView";
import { QueuesTable } from "@/components/queues/Queues";
import { StateBadge } from "@/components/StateBadge";
import { TableHead } from "@/components/TableHead";
import { formatAgo, formatDuration } from "@/lib/model/duration";
import { DEFAULT_QUERY } from "@/lib/model/requestQuery";
import type { State } from "@/lib/model/states";
import { overviewMetrics, recentFailures, type Percentiles } from "@/lib/views/overviewView";
import { requestsView } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

const OUTCOME: Partial<Record<State, string>> = { queued: "requeued", timeout: "timed out", completed: "completed from their result markers", failed: "failed" };

function LatencyRow({ label, p }: { label: string; p: Percentiles | null }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className="num">{p ? formatDuration(p.p50) : "—"}</td>
      <td className="num">{p ? formatDuration(p.p95) : "—"}</td>
      <td className="num">{p ? formatDuration(p.p99) : "—"}</td>
      <td className="num">{p?.n ?? 0}</td>
    </tr>
  );
}

export default function OverviewPage() {
  const tracker = getTracker();
  const now = tracker.options.now();
  const counts = tracker.countsByState();
  const recent = requestsView(tracker, DEFAULT_QUERY, getLastStuck());
  const unreadable = tracker.unreadableFiles();
  const metrics = overviewMetrics(tracker, now);
  const failures = recentFailures(tracker);
  const notice = getRecoveryNotice();
  // Requests that reached a final state (the charts above count attempts, each retry's too).
  const finishedCount = Object.values(metrics.finished).reduce((a, b) => a + (b ?? 0), 0);

  return (
    <>
      <h1>Overview</h1>
      {tracker.ownership.access === "observed" && (
        <p className="notice" role="note" aria-label="Observing read-only">
          reqwatch observes <code>{tracker.stateDir.root}</code> read-only: {tracker.ownership.reason}. It writes nothing there (its index is kept in your cache directory), changes no request, and every action is off. To allow actions, {tracker.ownership.toWrite} and restart the dashboard.
        </p>
      )}
      <LiveStateCounts initial={counts} />
      {notice && (
        <p className="notice" role="alert" aria-label="Recovery notice">
          When the dashboard started, {notice.total} request{notice.total === 1 ? "'s" : "s'"} reqwatch worker{notice.total === 1 ? " was" : "s were"} gone:{" "}
          {Object.entries(notice.outcomes)
            .map(([state, ids]) => `${ids.length} ${OUTCOME[state as State] ?? state}`)
            .join(", ")}
          .{" "}
          {Object.values(notice.outcomes)
            .flat()
            .slice(0, 10)
            .map((id) => (
              <Link prefetch={false} key={id} href={`/requests/${encodeURIComponent(id)}`} style={{ marginRight: 8 }}>
                {id}
              </Link>
            ))}
        </p>
      )}
      {unreadable.length > 0 && (
        <p className="notice" role="alert">
          {unreadable.length} file{unreadable.length === 1 ? "" : "s"} in the state directory could not be read and{" "}
          {unreadable.length === 1 ? "was" : "were"} left as {unreadable.length === 1 ? "it is" : "they are"}:{" "}
          {unreadable.slice(0, 3).map((file) => `${file.file} (${file.reason})`).join("; ")}
          {unreadable.length > 3 ? "; …" : ""} (<Link prefetch={false} href="/health">Health</Link> lists them all).
        </p>
      )}
      <ActivityCharts initial={activityView(tracker, "1h", null, now)} match={null} />
      <div className="grid2">
        <section aria-label="Last hour">
          <h2>Last hour</h2>
          <p>
            {finishedCount} request{finishedCount === 1 ? "" : "s"} finished
            {metrics.spanMs < metrics.windowMs ? ` in the ${formatDuration(metrics.spanMs)} since the first request` : ""} ({metrics.perMinute.toFixed(1)}/min):{" "}
            {Object.entries(metrics.finished).map(([state, n]) => `${n} ${state}`).join(", ") || "none"}
          </p>
          <table aria-label="Latency">
            <TableHead columns={[null, "p50", "p95", "p99", "n"]} />
            <tbody>
              <LatencyRow label="Queue wait" p={metrics.queueWait} />
              <LatencyRow label="Processing" p={metrics.processing} />
            </tbody>
          </table>
        </section>
        <section aria-label="Recent failures">
          <h2>Recent failures</h2>
          {failures.length ? (
            <table aria-label="Recent failures">
              <tbody>
                {failures.map((failure) => (
                  <tr key={failure.requestId}>
                    <td className="id">
                      <Link prefetch={false} href={`/requests/${encodeURIComponent(failure.requestId)}`}>{failure.requestId}</Link>
                    </td>
                    <td><StateBadge state={failure.state} /></td>
                    <td style={{ whiteSpace: "normal", maxWidth: 360 }}>{failure.error ? failure.error.slice(0, 200) : "—"}</td>
                    <td className="num">{formatAgo(failure.at, now)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted">No failures.</p>
          )}
        </section>
      </div>
      <section aria-labelledby="queues">
        <h2 id="queues">Queues</h2>
        <QueuesTable initial={getQueues()} />
      </section>
      <h2>Most recently updated</h2>
      <LiveRecentRequests initial={recent} />
    </>
  );
}
