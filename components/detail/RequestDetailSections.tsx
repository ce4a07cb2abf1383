"use client";

import Link from "next/link";
import { Fragment, memo, useState } from "react";
import type { ResponseView } from "@/lib/views/requestsView";
import { ActionDialog } from "../actions/ActionDialog";
import { useDashboard } from "../data/LiveFeed";
import { StateBadge } from "../StateBadge";
import { CopyButton } from "./CopyButton";
import { useRequestDetail } from "./RequestDetailQuery";
import { When } from "../Clock";

// The live leaves of a request's page (components/detail/RequestDetail.tsx lays them out): each
// reads the page's one query and re-renders when the request changes; only its dates tick.

/** A list of times (a callback's retries), each as every date is shown. */
function Dates({ at }: { at: readonly (number | string)[] }) {
  if (!at.length) return <>—</>;
  return at.map((t, i) => (
    <Fragment key={i}>
      {i > 0 && ", "}
      <When at={t} />
    </Fragment>
  ));
}

const downloadUrl = (requestId: string, part: string) => `/api/requests/${encodeURIComponent(requestId)}/download/${part}`;

export function RequestStateBadge() {
  return <StateBadge state={useRequestDetail().data.request.state} />;
}

/** A failed refetch (the page keeps its last data) and the stuck monitor's reason. */
export function RequestNotices() {
  const { data, error } = useRequestDetail();
  return (
    <>
      {error && (
        <p className="error-text" role="alert">
          {error.message}
        </p>
      )}
      {data.stuckReason && (
        <p className="notice" role="alert">
          Stuck: {data.stuckReason}
        </p>
      )}
    </>
  );
}

/** Retry and cancel, enabled as the request's state allows, and the dialog they open. */
export function RequestActions() {
  const { readOnly } = useDashboard();
  const { request, actions } = useRequestDetail().data;
  const [action, setAction] = useState<"retry" | "cancel" | null>(null);
  return (
    <>
      <div className="toolbar">
        <button
          type="button"
          className="primary"
          disabled={readOnly !== null || !actions.retry.allowed}
          onClick={() => setAction("retry")}
          title={readOnly ?? actions.retry.reason}
        >
          Retry
        </button>
        <button
          type="button"
          className="danger"
          disabled={readOnly !== null || !actions.cancel.allowed}
          onClick={() => setAction("cancel")}
          title={readOnly ?? actions.cancel.reason}
        >
          Cancel request
        </button>
        <span className="muted">
          {readOnly
            ? "Actions are off: this folder is observed read-only."
            : [
                actions.retry.allowed ? `Retry: ${actions.retry.reason}.` : `Retry is not available: ${actions.retry.reason}.`,
                actions.cancel.allowed ? `Cancelling moves it to failed (${actions.cancel.reason}).` : "",
              ].join(" ")}
        </span>
        <span className="spacer" />
        {/* The whole request, long texts included, as the index holds it: what `reqwatch get` prints. */}
        <a className="button" href={downloadUrl(request.requestId, "json")} download>
          Export JSON
        </a>
      </div>
      {action && (
        <ActionDialog
          input={action === "retry" ? { kind: "retry", ids: [request.requestId] } : { kind: "cancel", ids: [request.requestId] }}
          onClose={() => setAction(null)}
        />
      )}
    </>
  );
}

export function CorrelationFields() {
  const { request } = useRequestDetail().data;
  return (
    <dl className="fields">
      <dt>Workspace</dt>
      <dd>{request.workspace}</dd>
      <dt>Session</dt>
      <dd>
        {request.sessionId ? (
          <>
            <Link prefetch={false} href={`/sessions/${encodeURIComponent(request.sessionId)}`}>
              {request.sessionId}
            </Link>{" "}
            <Link prefetch={false} href={`/requests?session=${encodeURIComponent(request.sessionId)}`} className="muted">
              (its requests)
            </Link>
          </>
        ) : (
          "—"
        )}
      </dd>
      <dt>Chat</dt>
      <dd>{request.chatId ?? "—"}</dd>
      <dt>Model</dt>
      <dd>{request.model ?? "—"}</dd>
      <dt>Tokens</dt>
      <dd>{request.tokens ?? "—"}</dd>
      <dt>Created</dt>
      <dd>
        <When at={request.createdAt} />
      </dd>
      <dt>Updated</dt>
      <dd>
        <When at={request.lastUpdatedAt} />
      </dd>
      <dt>Deadline</dt>
      <dd>
        <When at={request.timeoutAt} />
      </dd>
      <dt>Version</dt>
      <dd>{request.version ?? "—"}</dd>
    </dl>
  );
}

export function ClaimFields() {
  const { request } = useRequestDetail().data;
  return (
    <dl className="fields">
      <dt>Attempt</dt>
      <dd>
        {request.attempt ?? "—"}
        {request.maxAttempts ? ` of ${request.maxAttempts}` : ""}
      </dd>
      <dt>Not before</dt>
      <dd>
        <When at={request.notBefore} />
      </dd>
      <dt>Worker</dt>
      <dd>{request.claim ? `pid ${request.claim.pid ?? "?"} on ${request.claim.host ?? "?"}` : "—"}</dd>
      <dt>Claimed</dt>
      <dd>
        <When at={request.claim?.claimedAt} />
      </dd>
      <dt>Heartbeat</dt>
      <dd>
        <When at={request.claim?.heartbeatAt} />
      </dd>
      <dt>Token</dt>
      <dd>{request.claim?.token ?? "—"}</dd>
    </dl>
  );
}

/** The callback as the request file records it. */
export function CallbackFields() {
  const { request, response } = useRequestDetail().data;
  return request.callback ? (
    <dl className="fields">
      <dt>Delivered</dt>
      <dd>{request.callback.success ? "yes" : "no"}</dd>
      <dt>Attempts</dt>
      <dd>{request.callback.attempts}</dd>
      <dt>Retries at</dt>
      <dd>
        <Dates at={request.callback.retryTimestamps} />
      </dd>
      <dt>Error</dt>
      <dd>{request.callback.error ?? "—"}</dd>
    </dl>
  ) : (
    <p className="muted">
      {response?.status === "ok" && response.response.callback
        ? "Not in the request file: the gateway's response file (below) records its delivery."
        : `No callback recorded${response ? " in the request file" : ""}.`}
    </p>
  );
}

/**
 * Prompt, output and error: escaped text (React never renders it as HTML), collapsible, copyable.
 * A text over the display limit comes cut (`total` is its full length) with a link to download it whole.
 * Memoized: a change elsewhere in the request (a heartbeat, a state) leaves an unchanged text alone.
 */
const TextBlock = memo(function TextBlock({
  label,
  text,
  total,
  download,
}: {
  label: string;
  text: string | undefined;
  total: number | undefined;
  download: string;
}) {
  if (text === undefined || text === "") return null;
  const name = label.toLowerCase();
  return (
    <details className="block" open={text.length < 4000}>
      <summary>
        {label} <span className="muted">({(total ?? text.length).toLocaleString()} characters)</span>{" "}
        {total === undefined ? (
          <CopyButton text={text} label={name} />
        ) : (
          <a href={download} download>
            Download the full {name}
          </a>
        )}
      </summary>
      {total !== undefined && (
        <p className="notice">
          Showing the first {text.length.toLocaleString()} of {total.toLocaleString()} characters.{" "}
          <a href={download} download>
            Download the full {name}
          </a>{" "}
          to see the rest.
        </p>
      )}
      <pre className="text" aria-label={label}>
        {text}
      </pre>
    </details>
  );
});

/** The gateway's response file for this request: output, exit code and callback delivery, or why there is none to show. */
function ResponseFileSection({ view, download }: { view: ResponseView; download: string }) {
  return (
    <section aria-label="Response file">
      <h2>
        Response file <code className="muted">{view.file}</code>
      </h2>
      {view.status === "missing" && <p className="muted">No response file (yet): the gateway writes it when the model has answered.</p>}
      {view.status === "unreadable" && (
        <p className="notice" role="alert">
          The response file cannot be read: {view.reason}. It is left as it is.
        </p>
      )}
      {view.status === "ok" && (
        <>
          <dl className="fields">
            <dt>Written</dt>
            <dd>{view.response.timestamp ?? "—"}</dd>
            <dt>Exit code</dt>
            <dd>{view.response.exitCode ?? "—"}</dd>
            <dt>Callback delivered</dt>
            <dd>{view.response.callback ? (view.response.callback.success ? "yes" : "no") : "—"}</dd>
            <dt>Callback attempts</dt>
            <dd>{view.response.callback?.attempts ?? "—"}</dd>
            <dt>Retries at</dt>
            <dd>
              <Dates at={view.response.callback?.retryTimestamps ?? []} />
            </dd>
            <dt>Callback error</dt>
            <dd>{view.response.callback?.error ?? "—"}</dd>
          </dl>
          <TextBlock label="Response output" text={view.response.output} total={view.outputChars ?? undefined} download={download} />
        </>
      )}
    </section>
  );
}

/** The response file's section, when the request has a gateway's ipc folder to look in. */
export function ResponseFile() {
  const { request, response } = useRequestDetail().data;
  return response ? <ResponseFileSection view={response} download={downloadUrl(request.requestId, "response-output")} /> : null;
}

/** The history table's rows (the page renders the table and its header). */
export function HistoryRows() {
  const { request } = useRequestDetail().data;
  return (
    <tbody>
      {!request.transitions?.length && (
        <tr>
          <td colSpan={5} className="muted">
            No history in the file (another program wrote it): the lifecycle above is from its lifecycle times.
          </td>
        </tr>
      )}
      {(request.transitions ?? []).map((entry, i) => (
        <tr key={i} className={entry.dropped ? "dropped" : undefined}>
          <td className="num">
            <When at={entry.at} />
          </td>
          <td>{entry.from ?? "—"}</td>
          <td>{entry.dropped ? "(dropped)" : entry.to}</td>
          <td>{entry.by ?? "—"}</td>
          <td>
            {entry.dropped ? "late delivery, dropped: " : ""}
            {entry.manual ? "manual: " : ""}
            {entry.reason ?? (entry.fields?.length ? `fields: ${entry.fields.join(", ")}` : "—")}
            {entry.error && <div className="why">error of this attempt: {entry.error.length > 500 ? `${entry.error.slice(0, 500)}…` : entry.error}</div>}
          </td>
        </tr>
      ))}
    </tbody>
  );
}

/** Prompt, output, error and the raw JSON. */
export function RequestContent() {
  const { request, truncated } = useRequestDetail().data;
  const download = (part: string) => downloadUrl(request.requestId, part);
  return (
    <>
      <TextBlock label="Prompt" text={request.prompt} total={truncated.prompt} download={download("prompt")} />
      <TextBlock label="Output" text={request.output} total={truncated.output} download={download("output")} />
      <TextBlock label="Error" text={request.error} total={truncated.error} download={download("error")} />
      <details className="block">
        <summary>
          Raw JSON{" "}
          {Object.keys(truncated).length ? (
            <>
              <span className="muted">(long texts cut)</span>{" "}
              <a href={download("json")} download>
                Download the request
              </a>
            </>
          ) : (
            <CopyButton text={JSON.stringify(request, null, 2)} label="raw JSON" />
          )}
        </summary>
        <pre className="text" aria-label="Raw JSON">
          {JSON.stringify(request, null, 2)}
        </pre>
      </details>
    </>
  );
}
