import { createHash } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ExportResultCode, type InstrumentationScope } from "@opentelemetry/core";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { writeFileDurable } from "../fs/durableWrite";
import { jsonObject, smallJsonValue } from "../fs/readSmallJson";
import { holderFile } from "../process/holderFile";
import type { ProcessIdentity } from "../process/liveness";
import { NO_EXPORT_YET, type ExportPosition, type OtelExportStatus } from "./exportStatus";
import type { Reader } from "../roles/reader";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { lifecycleSpans } from "./lifecycleSpans";
import { otlpEndpoint, otlpProtocol } from "./protocol";
import { startOtelMetrics } from "./otelMetrics";

export interface OtelExportOptions {
  /** Where spans go. Default: OTLP over HTTP as the OTEL_EXPORTER_OTLP_* variables say (protocol http/protobuf or http/json). */
  exporter?: SpanExporter;
  /** Default: otel-position.json in reqwatch's own store for the folder (the state folder, or its cache for an observed one). Beside it, `<file>.holder` names the one exporter that follows it. */
  positionFile?: string;
  /** With no position yet (a first start), begin at the feed's end instead of exporting every request the folder holds. */
  fromNow?: boolean;
  /** How often to look for new changes. Default 500 ms. */
  pollMs?: number;
  /** The metrics beside the traces (lib/otel/otelMetrics.ts); false: none. Default: on, unless OTEL_METRICS_EXPORTER=none. */
  metrics?: false | { exporter?: PushMetricExporter; intervalMs?: number };
  onError?: (error: Error) => void;
  /** A step went through after failed ones: the collector is back. */
  onRecovered?: () => void;
  /** Another exporter holds the position (null: it ended, this one has taken over). */
  onWaiting?: (holder: ProcessIdentity | null) => void;
}

/** The changes read per step: a step's spans are one export. */
const STEP_CHANGES = 500;
/** Requests per step of a whole re-export. */
const REEXPORT_PAGE = 200;
/** Spans remembered as sent (id and content), so a request that changes again does not send its old spans again. */
const SENT_REMEMBERED = 200_000;
const MAX_BACKOFF_MS = 30_000;
/** How long a stop waits for the exporters to send what they hold. */
const SHUTDOWN_MS = 5000;
/** How often an exporter that waits for another looks whether that one has stopped. */
const WAITING_POLL_MS = 2000;
/**
 * The position is written (with its fsync) at most this often while the export keeps up; a crash
 * resends at most this much, as the same spans with the same ids. Under a steady load, an fsync
 * after every step was a large part of the export's own CPU.
 */
const SAVE_EVERY_MS = 1000;

/** The OTLP exporter the standard variables describe: OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, ENDPOINT, HEADERS (read by the exporter itself). */
function otlpExporterFromEnv(env: NodeJS.ProcessEnv = process.env): SpanExporter {
  otlpEndpoint("TRACES", env);
  return otlpProtocol("TRACES", env) === "http/json" ? new OtlpJsonExporter() : new OtlpProtoExporter();
}

/** The resource: OTEL_SERVICE_NAME (default reqwatch) and the SDK's defaults, with OTEL_RESOURCE_ATTRIBUTES. */
function resourceOf(): Resource {
  return defaultResource().merge(resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME ?? "reqwatch" }));
}

/** A generation and a number. */
const MAX_POSITION_BYTES = 4096;

function readPosition(file: string): ExportPosition | null {
  return smallJsonValue(file, {
    maxBytes: MAX_POSITION_BYTES,
    links: "refuse",
    shape: (json) => {
      const value = jsonObject(json);
      return typeof value?.generation === "string" && typeof value.seq === "number" ? { generation: value.generation, seq: value.seq } : undefined;
    },
  });
}

function exportSpans(exporter: SpanExporter, spans: ReadableSpan[]): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) resolve();
      else reject(result.error ?? new Error("the collector refused the spans"));
    });
  });
}

const contentOf = (span: ReadableSpan) =>
  createHash("sha1")
    .update(JSON.stringify([span.endTime, span.status, span.attributes, span.events]))
    .digest("base64");

/**
 * Follow the change feed and export every request lifecycle as OpenTelemetry spans
 * (lib/otel/lifecycleSpans.ts). The position is written (durably) after the collector acknowledged
 * a step, so after a crash, a restart or a collector that was down, the export resumes where it
 * stopped and loses nothing; what it sends twice is the same spans with the same ids. A rebuilt
 * index (a new feed generation), or a feed trimmed past the position, is exported again from the
 * files. A slow or dead collector only delays this loop: nothing waits on it, and a step holds at
 * most STEP_CHANGES changes' spans in memory.
 */
export function startOtelExport(reader: Reader, options: OtelExportOptions = {}): OtelExport {
  return new OtelExport(reader, options);
}

/** A span to send, with its content (hashed once). */
type Outgoing = { span: ReadableSpan; key: string; content: string };

/** The running export `startOtelExport` starts: its loop, the position it holds, and what it has sent. */
export class OtelExport {
  readonly #reader: Reader;
  readonly #options: OtelExportOptions;
  readonly #exporter: SpanExporter;
  readonly #positionFile: string;
  readonly #pollMs: number;
  readonly #resource: Resource = resourceOf();
  readonly #scope: InstrumentationScope = { name: "reqwatch" };
  // One exporter per position: two would each send every span (identical, but twice the traffic).
  readonly #holder: ReturnType<typeof holderFile>;
  #holding = false;
  readonly #status: OtelExportStatus = { ...NO_EXPORT_YET };
  /** Per span sent: its content, and its events (dropped late results) for the metrics. */
  readonly #sent = new Map<string, { content: string; events: number }>();
  readonly #metrics: ReturnType<typeof startOtelMetrics> | null;
  #stopping = false;
  #failures = 0;
  readonly #wake = new AbortController();
  #savedAt = 0;
  #unsaved = false;
  readonly #loop: Promise<void>;

  constructor(reader: Reader, options: OtelExportOptions) {
    this.#reader = reader;
    this.#options = options;
    this.#exporter = options.exporter ?? otlpExporterFromEnv();
    this.#positionFile = options.positionFile ?? path.join(reader.stateDir.storeDir, "otel-position.json");
    this.#pollMs = options.pollMs ?? 500;
    this.#holder = holderFile(`${this.#positionFile}.holder`);
    this.#metrics =
      options.metrics === false || (options.metrics === undefined && process.env.OTEL_METRICS_EXPORTER === "none")
        ? null
        : startOtelMetrics(reader, this.#resource, {
            ...(options.metrics || {}),
            observing: () => this.#holding,
            onError: (error) => options.onError?.(new Error(`metrics: ${error.message}`)),
          });
    this.#loop = this.#run();
  }

  status(): OtelExportStatus {
    return { ...this.#status };
  }

  /** Stop after the step under way, and shut the exporters down (they send what they hold, for at most SHUTDOWN_MS). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake.abort();
    // The step under way, and what the exporters still hold, go out now, unless the collector is down: then not for long.
    await Promise.race([this.#loop.then(() => Promise.all([this.#exporter.shutdown(), this.#metrics?.shutdown()])), sleep(SHUTDOWN_MS)]);
    try {
      if (this.#holding) this.#flushPosition();
    } catch (error) {
      this.#options.onError?.(error as Error);
    }
    this.#holder.release();
  }

  async #run(): Promise<void> {
    const options = this.#options;
    while (!this.#stopping) {
      let more = false;
      try {
        if (!this.#hold()) {
          await sleep(WAITING_POLL_MS, undefined, { signal: this.#wake.signal }).catch(() => {});
          continue;
        }
        more = await this.#step();
        this.#status.lastSuccessAt = Date.now();
        if (this.#failures) options.onRecovered?.();
        this.#failures = 0;
      } catch (error) {
        this.#failures++;
        this.#status.lastError = { message: (error as Error).message, at: Date.now() };
        options.onError?.(error as Error);
      }
      if (this.#stopping) break;
      const failures = this.#failures;
      if (!more)
        await sleep(failures ? Math.min(MAX_BACKOFF_MS, this.#pollMs * 2 ** failures) : this.#pollMs, undefined, { signal: this.#wake.signal }).catch(() => {});
    }
  }

  #spansOf(ids: Iterable<string>): Outgoing[] {
    const outgoing: Outgoing[] = [];
    for (const id of ids) {
      const request = this.#reader.get(id);
      if (!request) continue;
      for (const span of lifecycleSpans(request, this.#resource, this.#scope)) {
        const key = `${span.spanContext().traceId}/${span.spanContext().spanId}`;
        const content = contentOf(span);
        if (this.#sent.get(key)?.content !== content) outgoing.push({ span, key, content });
      }
    }
    return outgoing;
  }

  #remember(outgoing: readonly Outgoing[]): void {
    const sent = this.#sent;
    for (const { span, key, content } of outgoing) {
      sent.delete(key);
      sent.set(key, { content, events: span.events.length });
    }
    for (const key of sent.keys()) {
      if (sent.size <= SENT_REMEMBERED) break;
      sent.delete(key);
    }
  }

  async #send(outgoing: Outgoing[]): Promise<void> {
    if (outgoing.length)
      await exportSpans(
        this.#exporter,
        outgoing.map(({ span }) => span),
      );
    this.#metrics?.recordSpans(outgoing.map(({ span, key }) => ({ span, previousEvents: this.#sent.get(key)?.events ?? null })));
    this.#remember(outgoing);
    this.#status.exported += outgoing.length;
  }

  /** The position reached; written now, or with a later step (`lazily`: unless SAVE_EVERY_MS has passed). */
  #save(position: ExportPosition, lazily = false): void {
    this.#status.position = position;
    this.#unsaved = true;
    if (!lazily || Date.now() - this.#savedAt >= SAVE_EVERY_MS) this.#flushPosition();
  }

  #flushPosition(): void {
    if (!this.#unsaved || !this.#status.position) return;
    writeFileDurable(this.#positionFile, `${JSON.stringify(this.#status.position)}\n`);
    this.#savedAt = Date.now();
    this.#unsaved = false;
  }

  /** Every request in the index, a page at a time, then the feed from where the scan began. */
  async #reexport(generation: string): Promise<void> {
    const from = this.#reader.feedLastSeq();
    let cursor: string | undefined;
    do {
      const page = this.#reader.list({ sort: "updatedAt", order: "asc", limit: REEXPORT_PAGE, cursor });
      await this.#send(this.#spansOf(page.items.map((row) => row.requestId)));
      cursor = page.nextCursor ?? undefined;
    } while (cursor && !this.#stopping);
    if (this.#stopping) return;
    this.#save({ generation, seq: from });
    this.#status.reexports++;
  }

  async #step(): Promise<boolean> {
    const reader = this.#reader;
    const status = this.#status;
    const generation = reader.generation();
    const position = status.position;
    if (!position && this.#options.fromNow) {
      this.#save({ generation, seq: reader.feedLastSeq() });
      return true;
    }
    if (!position || position.generation !== generation || position.seq < reader.feedHead().oldestSeq - 1) {
      await this.#reexport(generation);
      return true;
    }
    const changes = reader.changesSince(position.seq, STEP_CHANGES);
    if (!changes.length) {
      status.lagMs = 0;
      this.#flushPosition();
      return false;
    }
    status.lagMs = Date.now() - changes[0]!.at;
    const ids = new Set(changes.filter((change) => change.kind === "request.upserted").map((change) => change.requestId));
    await this.#send(this.#spansOf(ids));
    this.#save({ generation, seq: changes.at(-1)!.seq }, true);
    return changes.length === STEP_CHANGES;
  }

  /** Hold the position, or say who does; on taking it, start from where the last holder stopped. */
  #hold(): boolean {
    const status = this.#status;
    const now = this.#holder.hold();
    if (now.held && !this.#holding) {
      status.position = readPosition(this.#positionFile);
      if (status.waitingFor) {
        status.waitingFor = null;
        this.#options.onWaiting?.(null);
      }
    } else if (!now.held && now.holder && now.holder.pid !== status.waitingFor?.pid) {
      status.waitingFor = now.holder;
      this.#options.onWaiting?.(now.holder);
    }
    this.#holding = now.held;
    return this.#holding;
  }
}

export type OtelExportHandle = OtelExport;
