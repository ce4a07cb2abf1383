"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { SourceActionKind } from "@/lib/sources/sourceActions";
import { SourceActionDialog } from "./SourceActionDialog";
import { When } from "../Clock";
import type { SourceRequestView } from "@/lib/views/sourceRowsView";
import { usePollInterval } from "../data/LiveFeed";
import { sourceRequestOptions } from "../data/queries";
import { StateBadge } from "../StateBadge";
import { ReceivedLifecycle } from "./ReceivedLifecycle";
import { RowContent } from "./RowContent";
import { sourceTablePath } from "./sourcePaths";
import { SourceLine } from "./SourcesTable";

/**
 * A row of another program's queue, as reqwatch maps it: state, times, session, why it is stuck by
 * its owner's rules, and its text. Live: refetched when the source's owner writes. Retry and delete
 * only where the source was opened for writing. A received lifecycle is ReceivedLifecycle's.
 */
export function SourceRequest({ source, id, initial, problem }: { source: string; id: string; initial: SourceRequestView | null; problem: string | null }) {
  const pollMs = usePollInterval();
  const { data, error } = useQuery({ ...sourceRequestOptions(source, id), initialData: initial ?? undefined, refetchInterval: pollMs });
  const message = error?.message ?? (data ? null : problem);
  // Its page renders a received lifecycle on the server; here only when the store could not be read at first.
  if (data?.source.kind === "otel") return <ReceivedLifecycle source={source} id={id} view={data} message={message} />;
  return (
    <>
      <h1>
        Request <code>{id}</code> {data && <StateBadge state={data.request.state} />}
      </h1>
      <p>
        From{" "}
        <Link href={sourceTablePath(source)} prefetch={false}>
          {source}
        </Link>
        , another program&apos;s queue
        {data?.source.writable
          ? ", opened for writing: reqwatch retries and deletes only where claude-mem's own recovery does the same."
          : ", read only: reqwatch shows it and does not act on it."}
      </p>
      {message && (
        <p className="error-text" role="alert">
          {message}
        </p>
      )}
      {data && (
        <>
          <SourceLine source={data.source} />
          {data.stuckReason && (
            <p className="notice" role="alert">
              Stuck: {data.stuckReason}
            </p>
          )}
          {data.note && <p className="muted">{data.note}</p>}
          <SourceRowActions source={source} id={id} view={data} />
          <dl className="fields">
            <dt>Workspace</dt>
            <dd>{data.request.workspace}</dd>
            <dt>Session</dt>
            <dd>{data.request.sessionId ?? "—"}</dd>
            <dt>Attempt</dt>
            <dd>{data.request.attempt ?? "—"}</dd>
            {data.request.model !== undefined && (
              <>
                <dt>Model</dt>
                <dd>{data.request.model}</dd>
              </>
            )}
            <dt>Created</dt>
            <dd>
              <When at={data.request.createdAt} />
            </dd>
            <dt>Processing started</dt>
            <dd>
              <When at={data.request.processingStartedAt} />
            </dd>
            <dt>Finished</dt>
            <dd>
              <When at={data.request.completedAt} />
            </dd>
          </dl>
          {data.steps && data.steps.length > 0 && (
            <>
              <h2>What it did</h2>
              <table aria-label="What it did">
                <thead>
                  <tr>
                    <th scope="col">At</th>
                    <th scope="col">Step</th>
                    <th scope="col">What happened</th>
                  </tr>
                </thead>
                <tbody>
                  {data.steps.map((step, i) => (
                    <tr key={i}>
                      <td className="num">
                        <When at={step.at} />
                      </td>
                      <td>{step.name}</td>
                      <td style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{step.summary}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          {data.stored && (
            <>
              <h2>{data.storedBy === "reqwatch" ? "As reqwatch keeps it" : `As ${source} stores it`}</h2>
              <table aria-label="As stored">
                <tbody>
                  {Object.entries(data.stored).map(([column, value]) => (
                    <tr key={column}>
                      <th scope="row">{column}</th>
                      <td className="id" style={{ whiteSpace: "pre-wrap" }}>
                        {value === null ? "NULL" : String(value)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <RowContent view={data} />
        </>
      )}
    </>
  );
}

/** Retry or delete, where the source was opened for writing and the row is one its owner's recovery would take. */
function SourceRowActions({ source, id, view }: { source: string; id: string; view: SourceRequestView }) {
  const [kind, setKind] = useState<SourceActionKind | null>(null);
  if (!view.source.writable) return null;
  const { state } = view.request;
  const retryable = state === "failed" || (state === "processing" && view.stuckReason !== null);
  const leftOver = view.stuckReason?.startsWith("left over") ?? false;
  // The dialog stays until closed: it shows the result after the row has moved on.
  if (!retryable && !leftOver && !kind) return null;
  return (
    <div className="toolbar">
      {retryable && !leftOver && (
        <button type="button" className="primary" onClick={() => setKind("retry")}>
          Retry
        </button>
      )}
      {leftOver && (
        <button type="button" className="danger" onClick={() => setKind("delete")}>
          Delete
        </button>
      )}
      {kind && <SourceActionDialog source={source} kind={kind} ids={[id]} onClose={() => setKind(null)} />}
    </div>
  );
}
