"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatDuration } from "@/lib/model/duration";
import type { SessionRecord } from "@/lib/stateFiles/sessionFile";
import { DEFAULT_QUERY } from "@/lib/model/requestQuery";
import { STATES } from "@/lib/model/states";
import type { RequestsView } from "@/lib/views/requestsView";
import type { SessionDetailView } from "@/lib/views/sessionsView";
import { useDashboard, usePollInterval } from "../data/LiveFeed";
import { requestListOptions, sessionDetailOptions } from "../data/queries";
import { When } from "../Clock";
import { RequestsTable } from "../requests/RequestsTable";
import { TableHead } from "../TableHead";
import { plural } from "@/lib/model/plural";

function Steps({ title, items }: { title: string; items: string[] | undefined }) {
  return (
    <section aria-label={title}>
      <h2>
        {title} ({items?.length ?? 0})
      </h2>
      {items?.length ? (
        <ul>
          {items.map((item, i) => (
            <li key={i}>{item}</li>
          ))}
        </ul>
      ) : (
        <p className="muted">None.</p>
      )}
    </section>
  );
}

/** A session's context summary, its commands, files, and its requests, live. */
export function SessionDetail({ id, initial, initialRequests }: { id: string; initial: SessionDetailView; initialRequests: RequestsView }) {
  const pollMs = usePollInterval();
  const { data } = useQuery({ ...sessionDetailOptions(id), initialData: initial, refetchInterval: pollMs });
  const query = { ...DEFAULT_QUERY, session: id };
  const requests = useQuery({ ...requestListOptions(query), initialData: initialRequests, placeholderData: keepPreviousData, refetchInterval: pollMs });
  const { readOnly } = useDashboard();
  const { session, sessionId, state, requestCounts, seen } = data;
  const totalRequests = STATES.reduce((sum, s) => sum + requestCounts[s], 0);

  return (
    <>
      <h1>
        Session <code>{sessionId}</code> <span className={`session-state session-${state}`}>{state}</span>
      </h1>
      {seen && (
        <p aria-label="Requests seen">
          {plural(seen.requests, "request")} carry this id: the first created <When at={seen.firstSeen} />, the last updated <When at={seen.lastSeen} />.
        </p>
      )}
      {session ? (
        <RecordedContext session={session} />
      ) : (
        <p className="empty" role="status">
          No context was recorded for this session: it is known from the requests that carry its id.
          {!readOnly && (
            <>
              {" "}
              Record its focus and next steps with <code>reqwatch session snapshot --session {sessionId} --task &quot;...&quot;</code>.
            </>
          )}
        </p>
      )}

      <h2>
        Requests ({totalRequests}
        {totalRequests
          ? `: ${STATES.filter((s) => requestCounts[s])
              .map((s) => `${requestCounts[s]} ${s}`)
              .join(", ")}`
          : ""}
        )
      </h2>
      {requests.data.items.length ? (
        <RequestsTable rows={requests.data.items} label="Session requests" />
      ) : (
        <p className="muted">No requests carry this session id.</p>
      )}
      {requests.data.nextCursor && (
        <p>
          <Link prefetch={false} href={`/requests?session=${encodeURIComponent(id)}`}>
            All of this session&apos;s requests
          </Link>
        </p>
      )}
    </>
  );
}

const timeOf = (iso: string | undefined) => {
  const ms = Date.parse(iso ?? "");
  return Number.isFinite(ms) ? ms : -Infinity;
};
const newestFirst = (a: string | undefined, b: string | undefined) => {
  const [x, y] = [timeOf(a), timeOf(b)];
  return x === y ? 0 : y > x ? 1 : -1;
};

/** What a session recorded: focus, steps, blockers, patterns, files and commands. */
function RecordedContext({ session }: { session: SessionRecord }) {
  const snapshot = session.context_snapshot ?? {};
  const created = Date.parse(session.created_at ?? "");
  // Newest first, as the tool that wrote the file kept them in its own order; a time it did not write goes last.
  const files = Object.entries(session.files_modified ?? {}).sort(([a, x], [b, y]) => newestFirst(x.last_modified, y.last_modified) || a.localeCompare(b));
  const commands = [...(session.commands_executed ?? [])].sort((x, y) => newestFirst(x.timestamp, y.timestamp));
  return (
    <>
      <p aria-label="Context">
        {Number.isFinite(created) && (
          <>
            Active for {formatDuration(Math.max(0, Date.parse(session.last_updated ?? "") - created))}, started <When at={created} />
            {". "}
          </>
        )}
        <strong>Current focus:</strong> {snapshot.active_task ?? "—"}
      </p>
      <div className="grid2">
        <Steps title="Completed steps" items={snapshot.completed_steps} />
        <Steps title="Next steps" items={snapshot.next_steps} />
        <Steps title="Blocking issues" items={snapshot.blocking_issues} />
        <section aria-label="Patterns and workflows">
          <h2>Patterns and workflows</h2>
          <p>{session.patterns_detected?.join(", ") || "—"}</p>
          <p className="muted">
            {Object.entries(session.workflows_used ?? {})
              .map(([name, n]) => `${name} (${n})`)
              .join(", ") || "no workflows"}
          </p>
        </section>
      </div>

      <h2>
        Files modified ({files.length}
        {files.length > 1 ? ", newest first" : ""})
      </h2>
      {files.length ? (
        <table aria-label="Files modified">
          <TableHead columns={["File", "Changes", "Summary", "Last modified"]} />
          <tbody>
            {files.map(([file, entry]) => (
              <tr key={file}>
                <td className="id">{file}</td>
                <td className="num">{entry.modification_count ?? 0}</td>
                <td style={{ whiteSpace: "normal" }}>{entry.changes_summary ?? "—"}</td>
                <td className="num">
                  <When at={entry.last_modified} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">No files recorded.</p>
      )}

      <h2>
        Commands ({commands.length}
        {commands.length > 1 ? ", newest first" : ""})
      </h2>
      {commands.length ? (
        <table aria-label="Commands">
          <TableHead columns={["Started", "Command", "Workflow", "Duration", "Status"]} />
          <tbody>
            {commands.map((command, i) => (
              <tr key={i}>
                <td className="num">
                  <When at={command.timestamp} />
                </td>
                <td style={{ whiteSpace: "normal" }}>{command.command ?? "—"}</td>
                <td>{command.workflow ?? "—"}</td>
                <td className="num">{command.duration_seconds !== undefined ? formatDuration(command.duration_seconds * 1000) : "—"}</td>
                <td>{command.status ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">No commands recorded.</p>
      )}
    </>
  );
}
