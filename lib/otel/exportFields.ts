import { formatDuration } from "../model/duration";
import type { Field } from "../views/healthPage";
import type { OtelExportStatus } from "./exportStatus";
import { waitingText } from "./waitingText";

/** The OpenTelemetry export as the Health page lists it (here rather than in the page's view: views sit below lib/otel). */
export function exportFields(otel: OtelExportStatus): Field[] {
  return [
    { term: "State", value: [otel.waitingFor ? `Waiting: ${waitingText(otel.waitingFor)}` : "Exporting"] },
    { term: "Spans exported", value: [otel.exported.toLocaleString()] },
    { term: "Lag", value: [otel.waitingFor ? "— (the other exporter's)" : otel.lagMs === 0 ? "caught up" : formatDuration(otel.lagMs)] },
    { term: "Position", value: [otel.position ? `change ${otel.position.seq}` : "not yet"] },
    { term: "Last export", value: otel.lastSuccessAt ? [{ at: otel.lastSuccessAt }] : ["not yet"] },
    {
      term: "Last error",
      value: otel.lastError
        ? [
            { at: otel.lastError.at },
            `: ${otel.lastError.message}${otel.lastSuccessAt !== null && otel.lastSuccessAt > otel.lastError.at ? " (recovered since)" : ""}`,
          ]
        : ["none"],
    },
  ];
}
