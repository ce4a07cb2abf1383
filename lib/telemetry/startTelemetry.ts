import { parseDuration } from "../model/duration";
import { ReqwatchError } from "../model/errors";
import type { Redaction } from "../model/redaction";
import { otelSpec, type SourceSpec } from "../sources/sourceSpec";
import { DEFAULT_TELEMETRY_STUCK_AFTER_MS } from "../sources/telemetryQueue";
import { DEFAULT_OTLP_PORT, startOtlpReceiver, type ReceiverHandle, type ReceiverStatus } from "./otlpReceiver";
import { TelemetryStore, type IntakeRow, type UnmappedRow, type Usage } from "./telemetryStore";

/** What the store keeps: lifecycles heard of within a day, and at most this much on disk. */
export const DEFAULT_TELEMETRY_RETENTION_MS = 24 * 60 * 60_000;
export const TELEMETRY_MAX_BYTES = 256 * 1024 * 1024;
/** How often the retention runs. */
const TRIM_EVERY_MS = 60_000;
/** The pause between slices of a trim that has more to do: the receiver and the pages get the thread between them. */
const TRIM_AGAIN_MS = 100;

export interface TelemetrySettings {
  /** The receiver's port (0: any free one), or null: no receiver. */
  port: number | null;
  keepMs: number;
  /** A lifecycle still going on with nothing received for it this long is stuck. */
  stuckAfterMs: number;
}

/**
 * `REQWATCH_OTLP_PORT` (a port, 0 for any free one, or off; default 4318), `REQWATCH_TELEMETRY_RETENTION`
 * (a duration; default 1d) and `REQWATCH_TELEMETRY_STUCK_AFTER` (a duration; default 10m).
 */
export function telemetrySettings(env: NodeJS.ProcessEnv = process.env, port?: string): TelemetrySettings {
  const given = (port ?? env.REQWATCH_OTLP_PORT)?.trim().toLowerCase();
  let parsed: number | null = DEFAULT_OTLP_PORT;
  if (given === "off") parsed = null;
  else if (given !== undefined && given !== "") {
    parsed = /^\d{1,5}$/.test(given) ? Number(given) : NaN;
    if (!(parsed >= 0 && parsed <= 65535)) throw new ReqwatchError("BAD_INPUT", `Invalid ${port !== undefined ? "--otlp-port" : "REQWATCH_OTLP_PORT"}: ${JSON.stringify(given)}. Use a port (1 to 65535), 0 for any free one, or off.`);
  }
  return { port: parsed, keepMs: duration(env, "REQWATCH_TELEMETRY_RETENTION", DEFAULT_TELEMETRY_RETENTION_MS), stuckAfterMs: duration(env, "REQWATCH_TELEMETRY_STUCK_AFTER", DEFAULT_TELEMETRY_STUCK_AFTER_MS) };
}

function duration(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const given = env[name];
  const ms = given ? parseDuration(given, name) : fallback;
  if (!(ms > 0)) throw new ReqwatchError("BAD_INPUT", `Invalid ${name}: ${JSON.stringify(given)}. It must be longer than 0.`);
  return ms;
}

export interface TelemetryStatus {
  receiver: ReceiverStatus;
  file: string;
  bytes: number;
  keepMs: number;
  intake: IntakeRow[];
  unmapped: UnmappedRow[];
  usage: Usage;
}

export interface TelemetryHandle {
  /** The source the dashboard shows the received lifecycles as. */
  readonly source: SourceSpec;
  /** Settles once the receiver listens, or could not (its status says why). */
  readonly ready: Promise<ReceiverStatus>;
  status(): TelemetryStatus;
  close(): Promise<void>;
}

/**
 * The dashboard's telemetry: the store (`telemetry.db` in `storeDir`, reqwatch's own: beside the index), the OTLP/HTTP
 * receiver on loopback, and the retention every minute.
 */
export function startTelemetry(options: { storeDir: string; settings: TelemetrySettings & { port: number }; redaction: Redaction; host?: string; onError?: (error: Error) => void }): TelemetryHandle {
  const source = otelSpec(options.storeDir, options.settings.stuckAfterMs);
  const store = new TelemetryStore(source.file, { redaction: options.redaction, keepMs: options.settings.keepMs, maxBytes: TELEMETRY_MAX_BYTES });
  let receiver: ReceiverHandle | null = null;
  let closed = false;
  const started = startOtlpReceiver(store, { port: options.settings.port, ...(options.host && { host: options.host }) }).then((handle) => {
    if (closed) void handle.close();
    else receiver = handle;
    const { url, error } = handle.status();
    if (url) console.log(`reqwatch: receiving OpenTelemetry (OTLP/HTTP) on ${url}`);
    else console.error(`reqwatch: not receiving OpenTelemetry: ${error}`);
    return handle;
  });
  // Every minute, and at once again while a trim says there is more (each is a short slice of work).
  let timer: NodeJS.Timeout;
  const trim = () => {
    let more = false;
    try {
      more = store.trim().more;
    } catch (error) {
      options.onError?.(error as Error);
    }
    if (!closed) timer = setTimeout(trim, more ? TRIM_AGAIN_MS : TRIM_EVERY_MS).unref();
  };
  trim();
  return {
    source,
    ready: started.then((handle) => handle.status()),
    status: () => ({ receiver: receiver?.status() ?? { url: null, error: null }, file: source.file, bytes: store.bytes(), keepMs: options.settings.keepMs, intake: store.intake(), unmapped: store.unmapped(), usage: store.usage() }),
    async close() {
      closed = true;
      clearTimeout(timer);
      await (await started).close();
      store.close();
    },
  };
}
