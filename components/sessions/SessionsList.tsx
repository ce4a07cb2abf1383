"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { When } from "../Clock";
import { costNote, formatCost } from "@/lib/model/money";
import { DEFAULT_QUERY, requestQueryParams } from "@/lib/model/requestQuery";
import { lastActive } from "@/lib/sessions/sessionState";
import type { SessionRow } from "@/lib/views/sessionsView";
import { plural } from "@/lib/model/plural";
import { receivedActivity } from "@/lib/views/sessionFigures";
import { useDashboard, usePollInterval } from "../data/LiveFeed";
import { shellWord } from "@/lib/model/shellCommand";
import { sessionListOptions } from "../data/queries";
import { TableHead } from "../TableHead";
import { sessionPath } from "./sessionPath";
import { Cut } from "../Cut";

const count = (n: number) => n.toLocaleString("en-US");

/**
 * Every session, most recently active first: the folder's (state, active task, requests, commands,
 * files) and those received over OpenTelemetry (turns, model calls, tools, tokens, cost, stuck),
 * each marked by where it comes from. Live.
 */
export function SessionsList({ initial }: { initial: SessionRow[] }) {
  const pollMs = usePollInterval();
  const { data: sessions } = useQuery({ ...sessionListOptions(), initialData: initial, refetchInterval: pollMs });
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
  const none = <span className="muted">—</span>;
  return (
    <div className="table-scroll">
      <table aria-label="Sessions">
        <TableHead columns={["Session", "From", "State", "Last activity", "Active task", "Requests", "Did", "Tokens", "Cost", "Stuck"]} />
        <tbody>
          {sessions.map((s) => (
            <tr key={`${s.source ?? ""}:${s.sessionId}`}>
              <td className="id">
                <Link prefetch={false} href={sessionPath(s)} aria-label={s.sessionId}>
                  <Cut text={s.sessionId} />
                </Link>
              </td>
              <td title={s.source ? `received over OpenTelemetry from service ${s.service}` : "recorded in this state folder, or carried by its requests"}>
                {s.source ? s.from : "this folder"}
              </td>
              <td>
                <span className={`session-state session-${s.state}`}>{s.state}</span>
                {s.source === null && !s.recorded && <div className="muted">no recorded context</div>}
              </td>
              <td className="num">{lastActive(s) ? <When at={lastActive(s)} /> : "—"}</td>
              {s.source === null ? (
                <>
                  <td style={{ whiteSpace: "normal" }}>{s.activeTask ?? "—"}</td>
                  <td className="num">{count(s.requests)}</td>
                  <td style={{ whiteSpace: "normal" }}>
                    {plural(s.commands, "command")}, {plural(s.files, "file")}
                  </td>
                  <td className="num">{none}</td>
                  <td className="num">{none}</td>
                  <td className="num">{none}</td>
                </>
              ) : (
                <>
                  <td>{none}</td>
                  <td className="num">{count(s.requests)}</td>
                  <td style={{ whiteSpace: "normal" }}>{receivedActivity(s)}</td>
                  <td className="num" title={`cache read ${count(s.cacheReadTokens)}, cache write ${count(s.cacheWriteTokens)}`}>
                    {count(s.inputTokens)} in / {count(s.outputTokens)} out
                  </td>
                  <td className="num" title={costNote(s)}>
                    {formatCost(s)}
                  </td>
                  <td className="num">
                    {s.stuck ? (
                      <Link
                        prefetch={false}
                        href={`/requests?${requestQueryParams({ ...DEFAULT_QUERY, source: s.source, session: s.sessionId, stuck: true })}`}
                      >
                        {count(s.stuck)} stuck
                      </Link>
                    ) : (
                      "0"
                    )}
                  </td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
