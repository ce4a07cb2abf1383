import type { Redaction } from "../../model/redaction";
import type { Decoded } from "../otlp/decode";
import type { Signal } from "../records";
import type { TelemetryStore } from "../store/telemetryStore";
import { mapExport } from "./mapExport";
import { redactExport } from "./redactExport";

/**
 * What the receiver does with one decoded export, stage by stage, as a collector's pipeline:
 * recognise and map (./mapExport.ts, one dialect per client, lib/telemetry/dialects), redact
 * (./redactExport.ts), store (TelemetryStore.keep, one transaction). The receiving stage (bounds,
 * decompression, decoding) is before it: lib/telemetry/otlpReceiver.ts and otlp/decode.ts.
 * Returns how many lifecycles changed.
 */
export function ingestExport(
  store: TelemetryStore,
  redaction: Redaction,
  signal: Signal,
  decoded: Pick<Decoded, "records" | "rejected">,
  now = Date.now(),
): number {
  const { changes, unmapped } = redactExport(mapExport(decoded.records), redaction);
  return store.keep({ signal, records: decoded.records.length, rejected: decoded.rejected, changes, unmapped }, now);
}
