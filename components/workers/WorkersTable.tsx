"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { WorkerView } from "@/lib/views/workersView";
import { When } from "../Clock";
import { usePollInterval } from "../data/LiveFeed";
import { workersOptions } from "../data/queries";
import { TableHead } from "../TableHead";

/** Every worker process seen in the claims: who, alive or gone and how we know, what it holds and did. Live. */
export function WorkersTable({ initial }: { initial: WorkerView[] }) {
  const pollMs = usePollInterval();
  const { data: workers } = useQuery({ ...workersOptions(), initialData: initial, refetchInterval: pollMs });
  if (!workers.length) {
    return (
      <p className="empty" role="status">
        No worker has claimed a request yet. Workers appear here with their first claim: <code>runWorker</code> from the library, or your own code calling{" "}
        <code>claimNext</code>.
      </p>
    );
  }
  return (
    <table aria-label="Workers">
      <TableHead columns={["Worker", "Process", "Status", "Holding", "Heartbeat", "Completed", "Failed", "Released", "First seen", "Last seen"]} />
      <tbody>
        {workers.map((worker) => (
          <tr
            key={`${worker.host}|${worker.pid}|${worker.processStartedAt}|${worker.pid === null ? worker.name : ""}`}
            className={worker.status === "gone" && worker.unfinished.length ? "stuck" : undefined}
          >
            <td>{worker.name ?? "—"}</td>
            <td>
              {worker.pid === null ? "—" : `pid ${worker.pid}`}
              {worker.host && <div className="muted">{worker.host}</div>}
              {worker.processStartedAt !== null && (
                <div className="muted">
                  started <When at={worker.processStartedAt} />
                </div>
              )}
            </td>
            <td style={{ whiteSpace: "normal", maxWidth: 320 }}>
              <strong>{worker.status}</strong>
              <div className="muted">{worker.how}</div>
              {worker.unfinished.length > 0 && (
                <div>
                  left unfinished:{" "}
                  {worker.unfinished.map((held) => (
                    <Link
                      key={held.requestId}
                      prefetch={false}
                      href={`/requests/${encodeURIComponent(held.requestId)}`}
                      style={{ marginRight: 8 }}
                      title={held.outcome ? `${held.outcome} by the monitor` : "still processing under its claim"}
                    >
                      {held.requestId}
                    </Link>
                  ))}
                </div>
              )}
            </td>
            <td className="num">{worker.holding}</td>
            <td className="num">{worker.heartbeatAt === null ? "—" : <When at={worker.heartbeatAt} />}</td>
            <td className="num">{worker.completed}</td>
            <td className="num">{worker.failed}</td>
            <td className="num">{worker.released}</td>
            <td className="num">
              <When at={worker.firstSeen} />
            </td>
            <td className="num">
              <When at={worker.lastSeen} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
