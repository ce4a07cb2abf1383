"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { stuckText, type QueueRow } from "@/lib/views/queuesView";
import { TimeSince, When } from "../Clock";
import { TableHead } from "../TableHead";
import { useDashboard, usePollInterval } from "../data/LiveFeed";
import { queueKeys, queuesOptions, setQueuePaused } from "../data/queries";

/** The queues, live: from the server's render, then refetched on the feed's changes (or polled when it is down). */
function useQueues(initial: QueueRow[]) {
  const pollMs = usePollInterval();
  return useQuery({ ...queuesOptions(), initialData: initial, refetchInterval: pollMs }).data;
}

/** The paused workspaces, from the queues the header already holds (never fetched from here). */
export function usePausedWorkspaces(): ReadonlySet<string> {
  const queues = useQuery({ ...queuesOptions(), enabled: false }).data;
  return new Set(queues?.filter((row) => row.paused).map((row) => row.workspace));
}

/** Pause or resume one workspace's queue; a failure is shown beside the button. `named`: its text names the workspace (outside the queues table). */
function PauseButton({ workspace, paused, named = false }: { workspace: string; paused: boolean; named?: boolean }) {
  const { actionToken, readOnly } = useDashboard();
  const queryClient = useQueryClient();
  const toggle = useMutation({
    mutationFn: () => setQueuePaused(actionToken, workspace, !paused),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queueKeys.all }),
  });
  const verb = paused ? "Resume" : "Pause";
  return (
    <>
      <button
        type="button"
        disabled={readOnly !== null || toggle.isPending}
        onClick={() => toggle.mutate()}
        aria-label={`${verb} ${workspace}`}
        title={
          readOnly ??
          (paused ? `Workers take from ${workspace} again at their next claim` : `Workers take nothing more from ${workspace}; what they hold finishes`)
        }
      >
        {toggle.isPending ? `${verb === "Pause" ? "Pausing" : "Resuming"}…` : named ? `${verb} ${workspace}` : verb}
      </button>
      {toggle.error && (
        <span role="alert" className="error-text">
          {toggle.error.message}
        </span>
      )}
    </>
  );
}

/** The requests page's pause button for the workspace its filter names, once the queues are known. */
export function WorkspacePauseButton({ workspace }: { workspace: string }) {
  const pollMs = usePollInterval();
  const queues = useQuery({ ...queuesOptions(), refetchInterval: pollMs }).data;
  // A filter is a prefix: the button is for the workspace it names exactly, when that one has a queue.
  const row = queues?.find((candidate) => candidate.workspace === workspace);
  if (!row) return null;
  return <PauseButton workspace={workspace} paused={row.paused !== null} named />;
}

/** In the header while any workspace is paused: which, linking to the overview's queues. */
export function PausedBadge({ initial }: { initial: QueueRow[] }) {
  const paused = useQueues(initial).filter((row) => row.paused);
  if (!paused.length) return null;
  const names = paused.map((row) => row.workspace);
  return (
    <Link prefetch={false} href="/#queues" className="paused-badge" aria-label={`Paused: ${names.join(", ")}`}>
      paused: {names.length > 2 ? `${names.slice(0, 2).join(", ")} +${names.length - 2}` : names.join(", ")}
    </Link>
  );
}

/** The overview's queues: each workspace's waiting and running work, its oldest wait (red past the stuck threshold), and its pause. */
export function QueuesTable({ initial }: { initial: QueueRow[] }) {
  const queues = useQueues(initial);
  if (!queues.length) return <p className="muted">No request is queued or processing, and no workspace is paused.</p>;
  return (
    <div className="table-scroll">
      <table aria-label="Queues">
        <TableHead columns={["Workspace", "Queued", "Processing", "Oldest wait", "Status", null]} />
        <tbody>
          {queues.map((row) => (
            <tr key={row.workspace}>
              <td className="clip" title={row.workspace}>
                <Link prefetch={false} href={`/requests?workspace=${encodeURIComponent(row.workspace)}&states=queued,processing`}>
                  {row.workspace}
                </Link>
              </td>
              <td className="num">{row.queued}</td>
              <td className="num">{row.processing}</td>
              <td className={row.stuckQueued > 0 ? "num stuck-text" : "num"} title={row.stuckQueued > 0 ? "Waited past the queued stuck threshold" : undefined}>
                {row.oldestQueuedSince === null ? "—" : <TimeSince since={row.oldestQueuedSince} />}
              </td>
              <td className="text">
                {row.paused && (
                  <span>
                    <strong>paused</strong>
                    {row.paused.by ? ` by ${row.paused.by}` : ""}
                    {row.paused.pausedAt ? (
                      <>
                        {" "}
                        <When at={row.paused.pausedAt} />
                      </>
                    ) : (
                      ""
                    )}
                    {row.paused.reason ? `: ${row.paused.reason}` : ""}
                  </span>
                )}
                {/* A pause excuses the wait, not a stuck processing request: what is stuck in a paused queue is said too (the badge counts it). */}
                {row.paused && row.stuck > 0 && "; "}
                {row.stuck > 0 ? (
                  <Link
                    prefetch={false}
                    className="stuck-text"
                    href={`/requests?states=queued,processing&stuck=1&workspace=${encodeURIComponent(row.workspace)}`}
                    title="Which, and why"
                  >
                    {stuckText(row)}
                  </Link>
                ) : (
                  !row.paused && row.status
                )}
              </td>
              <td>
                <PauseButton workspace={row.workspace} paused={row.paused !== null} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
