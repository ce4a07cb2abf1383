"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatDuration } from "@/lib/model/duration";
import type { OverviewView, Percentiles } from "@/lib/views/overviewView";
import { When } from "../Clock";
import { StateBadge } from "../StateBadge";
import { TableHead } from "../TableHead";
import type { StateCounts as Counts } from "@/lib/db/queries/countByState";
import { DEFAULT_QUERY } from "@/lib/model/requestQuery";
import type { RequestsView } from "@/lib/views/requestsView";
import { usePollInterval } from "../data/LiveFeed";
import { countsOptions, overviewOptions, requestListOptions } from "../data/queries";
import { EmptyState } from "../EmptyState";
import { RequestsTable } from "../requests/RequestsTable";
import { StateCounts } from "../StateCounts";
import { plural } from "@/lib/model/plural";

/** The count per state, kept current by the event stream: one query for every place that shows it. */
function useCounts(initial: Counts): Counts {
  const pollMs = usePollInterval();
  return useQuery({ ...countsOptions(), initialData: initial, refetchInterval: pollMs }).data;
}

export function LiveStateCounts({ initial }: { initial: Counts }) {
  return <StateCounts counts={useCounts(initial)} />;
}

/** While the folder has no request at all: what to do next, first on the page (it goes when the first one arrives). */
export function LiveEmptyLead({ initial }: { initial: Counts }) {
  return Object.values(useCounts(initial)).some((n) => (n ?? 0) > 0) ? null : <EmptyState />;
}

/** The most recently updated requests, kept current by the event stream. */
export function LiveRecentRequests({ initial }: { initial: RequestsView }) {
  const pollMs = usePollInterval();
  const { data } = useQuery({ ...requestListOptions(DEFAULT_QUERY), initialData: initial, placeholderData: keepPreviousData, refetchInterval: pollMs });
  return data.items.length ? <RequestsTable rows={data.items} label="Recent requests" /> : <p className="muted">No requests yet.</p>;
}

/** The overview's last hour and newest failures: one query, refetched (throttled) as requests change. */
function useOverview(initial: OverviewView): OverviewView {
  const pollMs = usePollInterval();
  return useQuery({ ...overviewOptions(), initialData: initial, refetchInterval: pollMs }).data;
}

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

/** Why the latency's n is not the number finished, when it is not: one rule per figure, said. */
function LatencyNote({ finished, metrics }: { finished: number; metrics: OverviewView["metrics"] }) {
  const parts: string[] = [];
  if (metrics.sampled < finished) parts.push(`measured over the newest ${metrics.sampled} of the ${finished} finished`);
  const base = Math.min(finished, metrics.sampled);
  const unclaimed = base - (metrics.queueWait?.n ?? 0);
  if (unclaimed > 0)
    parts.push(`${unclaimed} finished without a wait to measure (cancelled before a worker took ${unclaimed === 1 ? "it" : "them"}, or written without one)`);
  const unfinished = base - (metrics.processing?.n ?? 0);
  if (unfinished > 0 && unfinished !== unclaimed) parts.push(`${unfinished} with no processing time`);
  return parts.length ? <p className="muted">n: {parts.join("; ")}.</p> : null;
}

/** Requests that reached a final state in the last hour (the charts count attempts, each retry's too), and their latency. */
export function LiveLastHour({ initial }: { initial: OverviewView }) {
  const { metrics } = useOverview(initial);
  const finished = Object.values(metrics.finished).reduce((a, b) => a + (b ?? 0), 0);
  return (
    <section aria-label="Last hour">
      <h2>Last hour</h2>
      <p>
        {finished === 0 ? "No request" : plural(finished, "request")} finished
        {metrics.spanMs < metrics.windowMs ? ` in the ${formatDuration(metrics.spanMs)} since the first request` : ""}
        {/* A rate over seconds of data would say more than it knows. */}
        {finished > 0 && metrics.spanMs >= 60_000 ? ` (${metrics.perMinute.toFixed(1)}/min)` : ""}
        {finished > 0
          ? `: ${Object.entries(metrics.finished)
              .map(([state, n]) => `${n} ${state}`)
              .join(", ")}`
          : "."}
      </p>
      <table aria-label="Latency">
        <TableHead columns={[null, "p50", "p95", "p99", "n"]} />
        <tbody>
          <LatencyRow label="Queue wait" p={metrics.queueWait} />
          <LatencyRow label="Processing" p={metrics.processing} />
        </tbody>
      </table>
      {/* n counts what could be measured; the sentence above counts every request that finished. */}
      <LatencyNote finished={finished} metrics={metrics} />
    </section>
  );
}

export function LiveRecentFailures({ initial }: { initial: OverviewView }) {
  const { failures } = useOverview(initial);
  return (
    <section aria-label="Recent failures">
      <h2>Recent failures</h2>
      {failures.length ? (
        <div className="table-scroll">
          <table aria-label="Recent failures">
            <tbody>
              {failures.map((failure) => (
                <tr key={failure.requestId}>
                  <td className="id" title={failure.requestId}>
                    <Link prefetch={false} href={`/requests/${encodeURIComponent(failure.requestId)}`}>
                      {failure.requestId}
                    </Link>
                  </td>
                  <td>
                    <StateBadge state={failure.state} />
                  </td>
                  <td className="text">{failure.error ? failure.error.slice(0, 200) : "—"}</td>
                  <td className="num">
                    <When at={failure.at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">No failures.</p>
      )}
    </section>
  );
}

const removedText = (n: number) => `removed ${n.toLocaleString()} finished request${n === 1 ? "" : "s"}`;

/** What the monitor's retention keeps, and what its latest runs removed (each removal is undoable from the audit log). */
export function LiveRetention({ initial }: { initial: OverviewView }) {
  const { retention } = useOverview(initial);
  if (!retention.active) {
    return (
      <p className="muted" aria-label="Retention">
        Retention: off, {retention.inactiveReason}.
      </p>
    );
  }
  const { latest, lastRemoval } = retention;
  const entryLink = (run: NonNullable<typeof lastRemoval>) =>
    run.entryId !== null && (
      <>
        {" "}
        (
        <Link prefetch={false} href="/audit">
          audit #{run.entryId}
        </Link>
        , undoable)
      </>
    );
  const archiveKeeps = retention.archiveRetentionMs === null ? "forever" : formatDuration(retention.archiveRetentionMs);
  return (
    <p className="muted" aria-label="Retention">
      {retention.retentionMs === null
        ? `Retention: finished requests are kept (REQWATCH_RETENTION=off); the archive keeps what a cleanup puts there ${archiveKeeps}. `
        : `Retention: finished requests go ${formatDuration(retention.retentionMs)} after their last update, into the archive, which keeps them ${archiveKeeps}. `}
      {latest ? (
        <>
          Last ran <When at={latest.finishedAt} />:{" "}
          {latest.error
            ? `failed: ${latest.error}`
            : latest.removed
              ? removedText(latest.removed)
              : retention.retentionMs === null
                ? "the archive's retention"
                : "nothing past it"}
          {latest.removed > 0 && entryLink(latest)}
          {!latest.error &&
            (latest.archiveDropped > 0
              ? `; the archive dropped ${latest.archiveDropped.toLocaleString()}`
              : retention.retentionMs === null
                ? ", nothing past it"
                : "")}
          .
          {lastRemoval && lastRemoval !== latest && lastRemoval.finishedAt !== latest.finishedAt && (
            <>
              {" "}
              Last removal <When at={lastRemoval.finishedAt} />: {removedText(lastRemoval.removed)}
              {entryLink(lastRemoval)}.
            </>
          )}
        </>
      ) : (
        `Not run yet: the monitor runs it every ${formatDuration(retention.intervalMs)}.`
      )}
    </p>
  );
}
