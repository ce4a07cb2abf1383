import Link from "next/link";
import { getLastStuck, getQueues, getReader, getRecoveryNotice, getSources } from "@/app/_routes/runtime";
import { SourcesTable } from "@/components/sources/SourcesTable";
import { LiveEmptyLead, LiveLastHour, LiveRecentFailures, LiveRecentRequests, LiveRetention, LiveStateCounts } from "@/components/overview/LiveOverview";
import { ActivityCharts } from "@/components/charts/ActivityCharts";
import { activityView } from "@/lib/views/activityView";
import { QueuesTable } from "@/components/queues/Queues";
import { DEFAULT_QUERY } from "@/lib/model/requestQuery";
import type { State } from "@/lib/model/states";
import { overviewView } from "@/lib/views/overviewView";
import { requestsView } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

const OUTCOME: Partial<Record<State, string>> = {
  queued: "requeued",
  timeout: "timed out",
  completed: "completed from their result markers",
  failed: "failed",
};

export default function OverviewPage() {
  const reader = getReader();
  const now = reader.options.now();
  const counts = reader.countsByState();
  const recent = requestsView(reader, DEFAULT_QUERY, getLastStuck());
  const unreadable = reader.unreadableFiles();
  const overview = overviewView(reader, now);
  const notice = getRecoveryNotice();
  const sources = getSources();

  return (
    <>
      <h1>Overview</h1>
      {reader.ownership.access === "observed" && (
        <p className="notice" role="note" aria-label="Observing read-only">
          reqwatch observes <code>{reader.stateDir.root}</code> read-only: {reader.ownership.reason}. It writes nothing there (its index is kept in your cache
          directory), changes no request, and every action is off. To allow actions, {reader.ownership.toWrite} and restart the dashboard.
        </p>
      )}
      <LiveEmptyLead initial={counts} />
      <LiveStateCounts initial={counts} />
      {sources.length > 0 && (
        <section aria-labelledby="sources">
          <h2 id="sources">Other programs&apos; queues</h2>
          <p className="muted">
            With stuck reasons by each owner&apos;s own rules; read only, unless opened for writing (<code>?write=1</code>).
          </p>
          <SourcesTable initial={sources} />
        </section>
      )}
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
          {unreadable.length} file{unreadable.length === 1 ? "" : "s"} in the state directory could not be read and {unreadable.length === 1 ? "was" : "were"}{" "}
          left as {unreadable.length === 1 ? "it is" : "they are"}:{" "}
          {unreadable
            .slice(0, 3)
            .map((file) => `${file.file} (${file.reason})`)
            .join("; ")}
          {unreadable.length > 3 ? "; …" : ""} (
          <Link prefetch={false} href="/health">
            Health
          </Link>{" "}
          lists them all).
        </p>
      )}
      <ActivityCharts initial={activityView(reader, "1h", null, now)} match={null} received={sources.some((source) => source.kind === "otel")} />
      <div className="grid2">
        <LiveLastHour initial={overview} />
        <LiveRecentFailures initial={overview} />
      </div>
      <section aria-labelledby="queues">
        <h2 id="queues">Queues</h2>
        <QueuesTable initial={getQueues()} />
      </section>
      <h2>Most recently updated</h2>
      <LiveRecentRequests initial={recent} />
      <LiveRetention initial={overview} />
    </>
  );
}
