"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { formatAgo } from "@/lib/model/duration";
import { TEXT_FIELDS } from "@/lib/model/requestFormat";
import type { SourceRequestView } from "@/lib/views/sourceRowsView";
import { usePollInterval } from "../data/LiveFeed";
import { sourceRequestOptions } from "../data/queries";
import { useNow } from "../data/useNow";
import { StateBadge } from "../StateBadge";
import { SourceLine, sourceTablePath } from "./SourceParts";

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
        From <Link href={sourceTablePath(source)} prefetch={false}>{source}</Link>, another program&apos;s queue, read only: reqwatch shows it and does not act on it.
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
          <dl className="fields">
            <dt>Workspace</dt>
            <dd>{data.request.workspace}</dd>
            <dt>Session</dt>
            <dd>{data.request.sessionId ?? "—"}</dd>
            <dt>Attempt</dt>
            <dd>{data.request.attempt ?? "—"}</dd>
            <dt>Created</dt>
            <dd suppressHydrationWarning>{iso(data.request.createdAt)} ({formatAgo(data.request.createdAt, now)})</dd>
            <dt>Processing started</dt>
            <dd>{iso(data.request.processingStartedAt)}</dd>
            <dt>Finished</dt>
            <dd>{iso(data.request.completedAt)}</dd>
          </dl>
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
