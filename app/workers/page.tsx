import { getReader } from "@/app/_routes/runtime";
import { WorkersTable } from "@/components/workers/WorkersTable";
import { workersView } from "@/lib/views/workersView";

export const dynamic = "force-dynamic";

export default function WorkersPage() {
  return (
    <>
      <h1>Workers</h1>
      <p className="muted">
        Every worker process seen in the requests&apos; claims: a process is its host, pid and start time, so a reused pid is another worker. Alive or gone is
        checked on this host by pid and start time; a worker on another host is known by its heartbeats. A gone worker lists the requests it left: still held
        under its claim, or released or timed out by the monitor.
      </p>
      <WorkersTable initial={workersView(getReader())} />
    </>
  );
}
