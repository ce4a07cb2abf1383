import type { Command } from "commander";
import { formatDuration } from "../../model/duration";
import { checkOtlpSettings } from "../../otel/protocol";
import { waitingText } from "../../otel/waitingText";
import { STATUS_EVERY_MS, type OtelStatusMessage } from "../../dashboard/otelChild";
import { stopIfTrackingOff, trackerFor, UsageError } from "../context";

/** The OTLP variables, checked before anything starts: a wrong one is a usage error that names it. */
export function otlpSettings(): { tracesEndpoint: string } {
  try {
    return checkOtlpSettings();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function registerOtel(program: Command): void {
  program
    .command("otel")
    .description(
      "Export every request lifecycle as OpenTelemetry traces (a PRODUCER create span, a CONSUMER process span per attempt) over OTLP/HTTP, as the standard variables say: OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT), OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or http/json), OTEL_SERVICE_NAME. Follows the change feed until Ctrl-C and resumes where it stopped.",
    )
    .summary("Export lifecycles as OpenTelemetry traces")
    .option("--from-now", "on a first start (no position kept yet), begin with what changes from now on instead of sending every request the folder holds")
    .action(async (options: { fromNow?: boolean }, command: Command) => {
      stopIfTrackingOff();
      const { tracesEndpoint } = otlpSettings();
      const { reader, upkeep, close } = trackerFor(command);
      // Other writers' files reach the feed through the ingest, as in the dashboard.
      const ingest = upkeep.startIngest({ onError: (error) => console.error("reqwatch otel: ingest failed:", error) });
      // Loaded only here: the OpenTelemetry packages would otherwise slow the start of every other command.
      const { startOtelExport } = await import("../../otel/otelExport");
      let lastError: string | null = null;
      console.error(
        `reqwatch otel: exporting ${reader.stateDir.root} to ${tracesEndpoint}${options.fromNow ? " (from now on: on a first start, the folder's history is not sent)" : ""}`,
      );
      const exporting = startOtelExport(reader, {
        fromNow: options.fromNow,
        onError: (error) => {
          if (error.message !== lastError) console.error(`reqwatch otel: export failed (retrying, nothing is skipped): ${error.message}`);
          lastError = error.message;
        },
        onRecovered: () => {
          console.error("reqwatch otel: export resumed; nothing was skipped");
          lastError = null;
        },
        onWaiting: (holder) =>
          console.error(holder ? `reqwatch otel: ${waitingText(holder)}` : "reqwatch otel: the other exporter stopped; exporting now, from where it stopped"),
      });
      const report = setInterval(() => {
        const { exported, lagMs, position } = exporting.status();
        console.error(`reqwatch otel: ${exported} spans exported; at change ${position?.seq ?? "-"}; lag ${formatDuration(lagMs)}`);
      }, 60_000);
      // Started by a dashboard (`--otel`): its Health page shows this status, sent when it changes.
      let sent = "";
      const toParent = process.send
        ? setInterval(() => {
            const message: OtelStatusMessage = { type: "otel-status", status: exporting.status() };
            const text = JSON.stringify(message);
            if (text !== sent) process.send?.(message);
            sent = text;
          }, STATUS_EVERY_MS)
        : null;
      await new Promise<void>((resolve) => {
        for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => resolve());
        // The dashboard that started it is gone, however it ended.
        if (process.send) process.once("disconnect", () => resolve());
      });
      clearInterval(report);
      if (toParent) clearInterval(toParent);
      await exporting.stop();
      ingest.stop();
      close();
      // A collector that holds a request open would keep the process alive until the exporter's own timeout.
      process.exit(0);
    });
}
