import { getFeedHub, getHealth, getReader, getSources } from "@/app/_routes/runtime";
import { SourcesTable } from "@/components/sources/SourcesTable";
import { AutoRefresh } from "@/components/AutoRefresh";
import { FieldList, Parts } from "@/components/health/FieldList";
import { ReceivedTelemetry } from "@/components/health/ReceivedTelemetry";
import { UnreadableFiles } from "@/components/health/UnreadableFiles";
import { UNMAPPED_PAGE } from "@/lib/telemetry/store/queries/unmapped";
import { exportFields } from "@/lib/otel/exportFields";
import { healthPage } from "@/lib/views/healthPage";
import { healthQuery } from "./schema";

export const dynamic = "force-dynamic";

export default async function HealthPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = healthQuery.parse(await searchParams);
  const health = getHealth({ unmappedOffset: (query.unmapped - 1) * UNMAPPED_PAGE });
  const view = healthPage(health, getReader().options);
  const sources = getSources();
  return (
    <>
      <h1>Health</h1>
      <AutoRefresh everyMs={view.refreshMs} />
      {view.guardNotice && (
        <p className="notice" role="alert">
          <Parts value={view.guardNotice} />
        </p>
      )}
      <div className="grid2">
        <section>
          <h2>State directory and index</h2>
          <FieldList fields={view.folder} />
        </section>
        <section>
          <h2>Watcher and reconciliation</h2>
          <FieldList fields={view.watcher} />
        </section>
        <section>
          <h2>Stuck monitor</h2>
          <FieldList fields={view.monitor} stuck={getFeedHub().stuckSnapshot} />
          <h2>Retention</h2>
          <FieldList fields={view.retention} label="Retention" />
          <h2>OpenTelemetry export</h2>
          {health.otel ? (
            <FieldList fields={exportFields(health.otel)} label="OpenTelemetry export" />
          ) : (
            <p className="muted">
              Off: start the dashboard with --otel (REQWATCH_OTEL=1) to export every lifecycle as OpenTelemetry traces, or run `reqwatch otel`.
            </p>
          )}
        </section>
      </div>
      <ReceivedTelemetry telemetry={view.telemetry} />
      <UnreadableFiles files={view.unreadable} />
      <h2>Sources</h2>
      {sources.length ? (
        <>
          <SourcesTable initial={sources} detail />
          <p className="muted">
            Each is looked at read-only every 250 ms (one opened for writing is written only by an action you confirm, in one transaction) (a source that cannot
            be read is tried again every 2 s); one that fails changes nothing for the others.
          </p>
        </>
      ) : (
        <p className="muted">
          None: start the dashboard with --source claude-mem, claude-mem:&lt;path&gt; or sqlite:&lt;mapping.json&gt; to read another program&apos;s queue beside
          the folder.
        </p>
      )}
    </>
  );
}
