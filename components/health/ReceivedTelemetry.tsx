import { FieldList, Parts } from "@/components/health/FieldList";
import { UnmappedNames } from "@/components/health/UnmappedNames";
import { UsageTables } from "@/components/health/UsageTables";
import type { ReceivedTelemetry as Received } from "@/lib/views/healthPage";

/** What the dashboard receives over OpenTelemetry and reads of the agents' files, or how to turn it on. */
export function ReceivedTelemetry({ telemetry }: { telemetry: Received | null }) {
  return (
    <>
      <h2>Received telemetry</h2>
      {telemetry ? (
        <>
          {telemetry.setAsideNotice && (
            <p className="notice" role="alert">
              <Parts value={telemetry.setAsideNotice} />
            </p>
          )}
          <FieldList fields={telemetry.fields} label="Received telemetry" />
          {telemetry.byDayAndModel.length > 0 && <UsageTables byDayAndModel={telemetry.byDayAndModel} bySession={telemetry.bySession} />}
          <UnmappedNames page={telemetry.unmapped} />
        </>
      ) : (
        <p className="muted">
          Off (REQWATCH_OTLP_PORT=off and REQWATCH_AGENT_FILES=off): start the dashboard with --otlp-port 4318 to see Claude Code and other OpenTelemetry apps
          as lifecycles, or --agent-files on to read Claude Code&apos;s and Codex CLI&apos;s own files.
        </p>
      )}
    </>
  );
}
