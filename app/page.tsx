import { getTracker } from "@/app/_server/tracker";
import { EmptyState } from "@/components/EmptyState";
import { RecentRequestsTable } from "@/components/RecentRequestsTable";
import { StateCounts } from "@/components/StateCounts";

export const dynamic = "force-dynamic";

const RECENT = 50;

export default function OverviewPage() {
  const tracker = getTracker();
  const counts = tracker.countsByState();
  const recent = tracker.list({ limit: RECENT });
  const unreadable = tracker.unreadableFiles();
  // The tracker's clock, the one that stamped the times shown.
  const now = tracker.options.now();

  return (
    <>
      <h1>Requests</h1>
      <StateCounts counts={counts} />
      {unreadable.length > 0 && (
        <p className="notice" role="alert">
          {unreadable.length} file{unreadable.length === 1 ? "" : "s"} in the state directory could not be read and{" "}
          {unreadable.length === 1 ? "was" : "were"} left as {unreadable.length === 1 ? "it is" : "they are"}:{" "}
          {unreadable.slice(0, 3).map((file) => `${file.file} (${file.reason})`).join("; ")}
          {unreadable.length > 3 ? "; …" : ""}
        </p>
      )}
      <h2>Most recently updated</h2>
      {recent.items.length ? <RecentRequestsTable requests={recent.items} now={now} /> : <EmptyState stateDir={tracker.stateDir.root} />}
    </>
  );
}
