"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import type { SourceActionKind } from "@/lib/sources/sourceActions";
import { SourceActionDialog } from "./SourceActionDialog";
import { formatAgo } from "@/lib/model/duration";
import { TEXT_FIELDS } from "@/lib/model/requestFormat";
import type { LifecycleFact } from "@/lib/views/lifecycleFacts";
import type { SourceRequestView } from "@/lib/views/sourceRowsView";
import { usePollInterval } from "../data/LiveFeed";
import { sourceRequestOptions } from "../data/queries";
import { useNow } from "../data/useNow";
import { StateBadge } from "../StateBadge";
import { SourceLine, sourceTablePath } from "./SourcesTable";
import { Timeline } from "./Timeline";

const iso = (ms: number | undefined) => (typeof ms === "number" ? new Date(ms).toISOString() : "—");

/**
 * A row of another program's queue, as reqwatch maps it: state, times, session, why it is stuck by
 * its owner's rules, and its text. Live: refetched when the source's owner writes. No actions: the
 * queue is its owner's.
 */
export function SourceRequest({ source, id, initial, problem }: { source: string; id: string; initial: SourceRequestView | null; problem: string | null }) {
  const pollMs = usePollInterval();
  const { data, error } = useQuery({ ...sourceRequestOptions(source, id), initialData: initial ?? undefined, refetchInterval: pollMs });
  const now = useNow(1000);
  const message = error?.message ?? (data ? null : problem);
  return (
    <>
      <h1>
        Request <code>{id}</code> {data && <StateBadge state={data.request.state} />}
      </h1>
      <p>
        {data?.source.kind === "otel" ? (
          <>
            From <Link href={sourceTablePath(source)} prefetch={false}>{source}</Link>, what OpenTelemetry instrumentation sent reqwatch&apos;s receiver: shown as it was told, with nothing to act on.
          </>
        ) : (
          <>
            From <Link href={sourceTablePath(source)} prefetch={false}>{source}</Link>, another program&apos;s queue
            {data?.source.writable ? ", opened for writing: reqwatch retries and deletes only where claude-mem's own recovery does the same." : ", read only: reqwatch shows it and does not act on it."}
          </>
        )}
      </p>
      {message && <p className="error-text" role="alert">{message}</p>}
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
          {data.facts ? <LifecycleFacts facts={data.facts} /> : <QueueRowFields view={data} now={now} />}
          {data.timeline && <Timeline timeline={data.timeline} />}
          {!data.timeline && data.steps && data.steps.length > 0 && (
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
                      <td className="id">{iso(step.at)}</td>
                      <td>{step.name}</td>
                      <td style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{step.summary}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          {data.stored && !data.facts && (
            <>
              <h2>{data.storedBy === "reqwatch" ? "As reqwatch keeps it" : `As ${source} stores it`}</h2>
              <table aria-label="As stored">
                <tbody>
                  {Object.entries(data.stored).map(([column, value]) => (
                    <tr key={column}>
                      <th scope="row">{column}</th>
                      <td className="id" style={{ whiteSpace: "pre-wrap" }}>{value === null ? "NULL" : String(value)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <h2>Content</h2>
          {TEXT_FIELDS.filter((field) => typeof data.request[field] === "string").map((field) => (
            <section key={field}>
              <h3>{field}</h3>
              <pre className="text">{data.request[field]}</pre>
              {data.truncated[field] !== undefined && <p className="muted">Shown: the first {String(data.request[field]).length.toLocaleString()} of {data.truncated[field]!.toLocaleString()} characters.</p>}
            </section>
          ))}
        </>
      )}
    </>
  );
}

/** A queue's row: where it is from and its times. */
function QueueRowFields({ view, now }: { view: SourceRequestView; now: number }) {
  const { request } = view;
  return (
    <dl className="fields">
      <dt>Workspace</dt>
      <dd>{request.workspace}</dd>
      <dt>Session</dt>
      <dd>{request.sessionId ?? "—"}</dd>
      <dt>Attempt</dt>
      <dd>{request.attempt ?? "—"}</dd>
      {request.model !== undefined && (
        <>
          <dt>Model</dt>
          <dd>{request.model}</dd>
        </>
      )}
      <dt>Created</dt>
      <dd suppressHydrationWarning>
        {iso(request.createdAt)} ({formatAgo(request.createdAt, now)})
      </dd>
      <dt>Processing started</dt>
      <dd>{iso(request.processingStartedAt)}</dd>
      <dt>Finished</dt>
      <dd>{iso(request.completedAt)}</dd>
    </dl>
  );
}

/** A received lifecycle in words: what reqwatch keeps of it, times as times, nothing it does not know. */
function LifecycleFacts({ facts }: { facts: LifecycleFact[] }) {
  return (
    <dl className="fields" aria-label="Lifecycle">
      {facts.map((fact) => (
        <Fragment key={fact.label}>
          <dt>{fact.label}</dt>
          <dd>{fact.value}</dd>
        </Fragment>
      ))}
    </dl>
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
