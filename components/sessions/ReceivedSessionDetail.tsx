"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { costNote, formatCost } from "@/lib/model/money";
import { DEFAULT_QUERY, requestQueryParams } from "@/lib/model/requestQuery";
import type { RequestsView } from "@/lib/views/requestsView";
import type { TelemetrySessionView } from "@/lib/views/telemetrySessionsView";
import { usePollInterval } from "../data/LiveFeed";
import { receivedSessionOptions, requestListOptions } from "../data/queries";
import { When } from "../Clock";
import { RequestsTable } from "../requests/RequestsTable";
import { sourceRowPath } from "../sources/sourcePaths";
import { ByModel, count, SessionErrors, ToolsUsed } from "./ReceivedSessionParts";

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

      <ByModel rows={byModel} />
      <ToolsUsed rows={tools} />
      <SessionErrors rows={errors} />

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
