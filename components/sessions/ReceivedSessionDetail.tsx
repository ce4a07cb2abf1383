"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatDuration } from "@/lib/model/duration";
import { costNote, formatCost } from "@/lib/model/money";
import { DEFAULT_QUERY, requestQueryParams } from "@/lib/model/requestQuery";
import type { RequestsView } from "@/lib/views/requestsView";
import type { TelemetrySessionView } from "@/lib/views/telemetrySessionsView";
import { usePollInterval } from "../data/LiveFeed";
import { receivedSessionOptions, requestListOptions } from "../data/queries";
import { When } from "../Clock";
import { RequestsTable } from "../requests/RequestsTable";
import { sourceRowPath } from "../sources/sourcePaths";
import { TableHead } from "../TableHead";

const count = (n: number) => n.toLocaleString("en-US");

/**
 * A session received over OpenTelemetry (a Claude Code `session.id`, a GenAI conversation): what it
 * used (turns, model calls, tools, tokens and cost, per model), what went wrong, and its turns, each
 * leading to its lifecycle page. Live: it follows the `otel` source's changes.
 */
export function ReceivedSessionDetail({ id, initial, initialRequests }: { id: string; initial: TelemetrySessionView; initialRequests: RequestsView }) {
  const pollMs = usePollInterval();
  const { data } = useQuery({ ...receivedSessionOptions("otel", id), initialData: initial, refetchInterval: pollMs });
  const query = { ...DEFAULT_QUERY, source: "otel", session: id };
  const requests = useQuery({ ...requestListOptions(query), initialData: initialRequests, placeholderData: keepPreviousData, refetchInterval: pollMs });
  const { session, byModel, tools, errors, stuck } = data;
  const lifecycles = session.turns ? "Turns" : "Requests";

  return (
    <>
      <h1>
        Session <code>{session.sessionId}</code> <span className={`session-state session-${session.state}`}>{session.state}</span>
      </h1>
      <p aria-label="Received">
        Received over OpenTelemetry from <strong>{session.from}</strong>: the first record <When at={session.firstSeen} />, the last{" "}
        <When at={session.lastSeen} />.
      </p>
      <dl className="fields" aria-label="Session figures">
        <dt>Turns</dt>
        <dd>{count(session.turns)}</dd>
        <dt>Model calls</dt>
        <dd>{count(session.calls)}</dd>
        <dt>Tool uses</dt>
        <dd>{count(session.tools)}</dd>
        <dt>Tokens</dt>
        <dd>
          {count(session.inputTokens)} in / {count(session.outputTokens)} out (cache read {count(session.cacheReadTokens)}, cache write{" "}
          {count(session.cacheWriteTokens)})
        </dd>
        <dt>Cost</dt>
        <dd title={costNote(session)}>{formatCost(session)}</dd>
        <dt>Going on</dt>
        <dd>
          {session.live ? `${count(session.live)}, of which ${count(session.stuck)} stuck` : "nothing"}
          {session.stuck > 0 && (
            <>
              {" "}
              <Link prefetch={false} href={`/requests?${requestQueryParams({ ...query, stuck: true })}`}>
                show the stuck
              </Link>
            </>
          )}
        </dd>
      </dl>
      {stuck.length > 0 && (
        <ul className="notice" role="alert" aria-label="Stuck">
          {stuck.map((row) => (
            <li key={row.requestId}>
              <Link prefetch={false} href={sourceRowPath("otel", row.requestId)}>
                {row.requestId}
              </Link>{" "}
              is stuck: {row.reason}
            </li>
          ))}
        </ul>
      )}

      <section aria-label="Cost and tokens by model">
        <h2>By model ({byModel.length})</h2>
        {byModel.length ? (
          <table aria-label="Cost and tokens by model">
            <TableHead columns={["Model", "Calls", "Input tokens", "Output tokens", "Cache read", "Cache write", "Cost"]} />
            <tbody>
              {byModel.map((row) => (
                <tr key={row.model}>
                  <td>{row.model}</td>
                  {[row.calls, row.inputTokens, row.outputTokens, row.cacheReadTokens, row.cacheWriteTokens].map((value, i) => (
                    <td key={i} className="num">
                      {count(value)}
                    </td>
                  ))}
                  <td className="num" title={costNote(row)}>
                    {formatCost(row)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No model call was received.</p>
        )}
      </section>
      <section aria-label="Tools used">
        <h2>Tools used ({tools.length})</h2>
        {tools.length ? (
          <table aria-label="Tools used">
            <TableHead columns={["Tool", "Uses", "Failed", "Time"]} />
            <tbody>
              {tools.map((row) => (
                <tr key={row.name}>
                  <td>{row.name}</td>
                  <td className="num">{count(row.uses)}</td>
                  <td className="num">{count(row.failed)}</td>
                  <td className="num">{formatDuration(row.durationMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No tool was used.</p>
        )}
      </section>

      <h2>Errors ({errors.length})</h2>
      {errors.length ? (
        <table aria-label="Errors">
          <TableHead columns={["Request", "State", "When", "Error"]} />
          <tbody>
            {errors.map((row) => (
              <tr key={row.requestId}>
                <td className="id">
                  <Link prefetch={false} href={sourceRowPath("otel", row.requestId)}>
                    {row.requestId}
                  </Link>
                </td>
                <td>{row.state}</td>
                <td className="num">
                  <When at={row.at} />
                </td>
                <td style={{ whiteSpace: "normal" }}>{row.error}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">None.</p>
      )}

      <h2>
        {lifecycles} ({count(session.requests)})
      </h2>
      {requests.data.items.length ? <RequestsTable rows={requests.data.items} label="Session requests" /> : <p className="muted">None kept.</p>}
      {requests.data.nextCursor && (
        <p>
          <Link prefetch={false} href={`/requests?${requestQueryParams(query)}`}>
            All of this session&apos;s {lifecycles.toLowerCase()}
          </Link>
        </p>
      )}
    </>
  );
}
