"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatAgo, formatDuration } from "@/lib/model/duration";
import type { SessionRow } from "@/lib/views/sessionsView";
import { useDashboard, usePollInterval } from "../data/LiveFeed";
import { shellWord } from "@/lib/model/shellCommand";
import { sessionListOptions } from "../data/queries";
import { useNow } from "../data/useNow";
import { TableHead } from "../TableHead";

/** Every session: state, age, last update, active task, and counts of commands, files and requests. Live. */
export function SessionsList({ initial }: { initial: SessionRow[] }) {
  const pollMs = usePollInterval();
  const { data: sessions } = useQuery({ ...sessionListOptions(), initialData: initial, refetchInterval: pollMs });
  const now = useNow(1000);
  const { readOnly, stateDir } = useDashboard();
  if (!sessions.length) {
    return readOnly ? (
      <p className="empty" role="status">
        No sessions yet: they appear here as the program that owns this folder records them, or as its requests carry a <code>sessionId</code>.
      </p>
    ) : (
      <p className="empty" role="status">
        No sessions yet. Start one with <code>npx reqwatch session start --state-dir {shellWord(stateDir)}</code>, record a command with{" "}
        <code>npx reqwatch session command &quot;add auth&quot; --status completed --state-dir {shellWord(stateDir)}</code>, and requests that carry its id as{" "}
        <code>sessionId</code> are listed with it.
      </p>
    );
  }
  return (
    <table aria-label="Sessions">
      <TableHead columns={["Session", "State", "Age", "Updated", "Active task", "Commands", "Files", "Requests"]} />
      <tbody>
        {sessions.map((s) => (
          <tr key={s.sessionId}>
            <td className="id">
              <Link prefetch={false} href={`/sessions/${encodeURIComponent(s.sessionId)}`}>{s.sessionId}</Link>
            </td>
            <td>
              <span className={`session-state session-${s.state}`}>{s.state}</span>
              {!s.recorded && <div className="muted">no recorded context</div>}
            </td>
            <td className="num" suppressHydrationWarning>{s.createdAt ? formatDuration(Math.max(0, now - s.createdAt)) : "—"}</td>
            <td className="num" suppressHydrationWarning>{s.updatedAt ? formatAgo(s.updatedAt, now) : "—"}</td>
            <td style={{ whiteSpace: "normal" }}>{s.activeTask ?? "—"}</td>
            <td className="num">{s.commands}</td>
            <td className="num">{s.files}</td>
            <td className="num">{s.requests}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
