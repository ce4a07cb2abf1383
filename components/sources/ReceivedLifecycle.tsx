import Link from "next/link";
import { Fragment } from "react";
import type { LifecycleFact } from "@/lib/views/lifecycleFacts";
import type { SourceRequestView } from "@/lib/views/sourceRowsView";
import { When } from "../Clock";
import { StateBadge } from "../StateBadge";
import { RowContent } from "./RowContent";
import { sourceTablePath } from "./sourcePaths";
import { SourceLine } from "./SourcesTable";
import { Timeline } from "./Timeline";

/**
 * A lifecycle the OpenTelemetry receiver was sent (a turn, a call, a message): what reqwatch keeps
 * of it in words, its timeline, its texts. No state of its own: its page renders it on the server
 * (and refreshes it while it goes on); nothing to act on.
 */
export function ReceivedLifecycle({ source, id, view, message = null }: { source: string; id: string; view: SourceRequestView; message?: string | null }) {
  return (
    <>
      <h1>
        Request <code>{id}</code> <StateBadge state={view.request.state} />
      </h1>
      <p>
        From{" "}
        <Link href={sourceTablePath(source)} prefetch={false}>
          {source}
        </Link>
        , what OpenTelemetry instrumentation sent reqwatch&apos;s receiver, or an agent&apos;s own session files said: shown as it was told, with nothing to act
        on.
      </p>
      {message && (
        <p className="error-text" role="alert">
          {message}
        </p>
      )}
      <SourceLine source={view.source} />
      {view.stuckReason && (
        <p className="notice" role="alert">
          Stuck: {view.stuckReason}
        </p>
      )}
      {view.note && <p className="muted">{view.note}</p>}
      {view.facts && <LifecycleFacts facts={view.facts} />}
      {view.timeline && <Timeline timeline={view.timeline} />}
      <RowContent view={view} />
    </>
  );
}

/** A received lifecycle in words: what reqwatch keeps of it, times as times, nothing it does not know. */
function LifecycleFacts({ facts }: { facts: LifecycleFact[] }) {
  return (
    <dl className="fields" aria-label="Lifecycle">
      {facts.map((fact) => (
        <Fragment key={fact.label}>
          <dt>{fact.label}</dt>
          <dd>{fact.at === undefined ? fact.value : <When at={fact.at} />}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
