import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { isReqwatchError } from "../model/errors";
import { isLoopbackHost } from "../http/loopback";
import { decodeExport, encodeResponse, encodeStatus, type Decoded, type Encoding } from "./otlp/decode";
import type { Signal } from "./records";

/** A body past this, as sent, is refused before it is read whole (413). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** And past this once decompressed: a gzip bomb stops here, not at the end of its inflating. */
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;
/** Exports in flight at once past which more are told to come back later (429, Retry-After). */
const MAX_IN_FLIGHT = 32;
/**
 * How long an export's body may take to arrive: an exporter sends a few MB at once, so an upload
 * still going after this has stalled, and gives its slot back (408) rather than hold it for Node's
 * five-minute request timeout while every other exporter is told 429.
 */
const UPLOAD_DEADLINE_MS = 10_000;

/** gRPC status codes, as OTLP/HTTP's google.rpc.Status carries them. */
const GRPC = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14 } as const;

export interface ReceiverStatus {
  /** Where it listens, or null (off, or not started). */
  url: string | null;
  /** Why it does not listen (the port is taken), or null. */
  error: string | null;
}

/** What is done with an export once decoded (lib/telemetry/pipeline/ingestExport.ts): returns how many lifecycles changed. */
export type IngestExport = (signal: Signal, decoded: Decoded) => number;

export interface ReceiverHandle {
  status(): ReceiverStatus;
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP receiver (the OpenTelemetry protocol's HTTP transport): POST /v1/traces, /v1/logs
 * and /v1/metrics in `application/x-protobuf` or `application/json`, gzip or not, answered as the
 * specification says: 200 with the export response (its `partial_success` saying what was
 * rejected), 400 for what does not decode, 413 past the size limits (bytes, inflated bytes,
 * records: MAX_RECORDS_PER_EXPORT), 415 for another media type or
 * encoding, 429 with Retry-After when too many exports are in flight, 503 with Retry-After when the
 * store is busy or the disk full (exporters retry a 503, not a 500); a failure's body is a
 * google.rpc.Status in the request's encoding, or its message as text to a request in neither. Like the dashboard, it answers only to a loopback
 * Host, and refuses a request that carries a browser's Origin: a web page may not post telemetry
 * into it (there is no CORS).
 */
function otlpRequestListener(
  ingest: IngestExport,
  onStored: (changed: number) => void = () => {},
  uploadDeadlineMs = UPLOAD_DEADLINE_MS,
): http.RequestListener {
  let inFlight = 0;
  return (request, response) => {
    // The path as sent, never parsed as a URL: a target like `//:99999/x` is not a URL and must not throw here.
    const pathname = (request.url ?? "/").split("?")[0]!;
    const signal = /^\/v1\/(traces|logs|metrics)\/?$/.exec(pathname)?.[1] as Signal | undefined;
    const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    const encoding: Encoding = type === "application/json" ? "json" : "protobuf";
    const fail = (status: number, code: number, message: string, headers: http.OutgoingHttpHeaders = {}) =>
      replyFailure(request, response, type, { status, code, message, headers });
    const contentEncoding = (request.headers["content-encoding"] ?? "identity").trim().toLowerCase();
    const refused = refusedAtOnce(request, pathname, signal, type, contentEncoding);
    if (refused) return replyFailure(request, response, type, refused);
    // A request without one was refused (404).
    const accepted = signal!;
    if (inFlight >= MAX_IN_FLIGHT) return fail(429, GRPC.RESOURCE_EXHAUSTED, "Too many exports at once; try again in a second.", { "retry-after": "1" });
    inFlight++;
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (!done) inFlight--;
      done = true;
      clearTimeout(deadline);
    };
    const deadline = setTimeout(() => {
      if (done) return;
      finish();
      fail(408, GRPC.UNAVAILABLE, `The export's body did not arrive within ${uploadDeadlineMs} ms; send it again.`, { connection: "close" });
      // The stalled connection is closed: nothing more of it is read.
      request.socket.destroySoon();
    }, uploadDeadlineMs);
    request.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        finish();
        fail(413, GRPC.RESOURCE_EXHAUSTED, `The export is over ${MAX_BODY_BYTES} bytes: send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE).`, {
          connection: "close",
        });
        return;
      }
      chunks.push(chunk);
    });
    // An exporter that goes away mid-body (or errs) is no longer in flight.
    request.on("close", finish);
    request.on("end", () => {
      if (done) return;
      finish();
      let body: Buffer;
      try {
        body = contentEncoding === "gzip" ? zlib.gunzipSync(Buffer.concat(chunks), { maxOutputLength: MAX_INFLATED_BYTES }) : Buffer.concat(chunks);
      } catch (error) {
        const tooBig = (error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE";
        return tooBig
          ? fail(413, GRPC.RESOURCE_EXHAUSTED, `The export inflates past ${MAX_INFLATED_BYTES} bytes; it was not read.`)
          : fail(400, GRPC.INVALID_ARGUMENT, `The body is not gzip: ${(error as Error).message}`);
      }
      try {
        const decoded = decodeExport(accepted, encoding, body);
        const changed = ingest(accepted, decoded);
        response.writeHead(200, { "content-type": encoding === "json" ? "application/json" : "application/x-protobuf" });
        response.end(encodeResponse(accepted, encoding, decoded.rejected, decoded.reason));
        if (changed > 0) onStored(changed);
      } catch (error) {
        replyFailure(request, response, type, storeFailure(error));
      }
    });
  };
}

/** A refusal as OTLP/HTTP says it: the HTTP status, the gRPC code and message of its google.rpc.Status, and headers. */
interface Failure {
  status: number;
  code: number;
  message: string;
  headers?: http.OutgoingHttpHeaders;
}

/** A failure is said in the request's format; to a request in neither OTLP format (curl, a browser), as text. */
function replyFailure(request: http.IncomingMessage, response: http.ServerResponse, type: string, { status, code, message, headers = {} }: Failure): void {
  if (type === "application/json" || type === "application/x-protobuf") {
    response.writeHead(status, { "content-type": type, ...headers });
    response.end(encodeStatus(type === "application/json" ? "json" : "protobuf", code, message));
  } else {
    response.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
    response.end(`${message}\n`);
  }
  request.resume();
}

/** What is refused from the request's line and headers alone, before a byte of its body is read; null: nothing. */
function refusedAtOnce(request: http.IncomingMessage, pathname: string, signal: Signal | undefined, type: string, contentEncoding: string): Failure | null {
  const refuse = (status: number, code: number, message: string, headers?: http.OutgoingHttpHeaders): Failure => ({ status, code, message, headers });
  if (!isLoopbackHost(request.headers.host)) return refuse(403, GRPC.PERMISSION_DENIED, "The OTLP receiver answers only to localhost, 127.0.0.1 and [::1].");
  if (request.headers.origin !== undefined)
    return refuse(403, GRPC.PERMISSION_DENIED, "A web page may not send telemetry here: the request carries a browser's Origin.");
  if (!signal) return refuse(404, GRPC.NOT_FOUND, `No OTLP endpoint at ${pathname.slice(0, 200)}: use /v1/traces, /v1/logs or /v1/metrics.`);
  if (request.method !== "POST") return refuse(405, GRPC.UNIMPLEMENTED, `Send exports with POST, not ${request.method}.`, { allow: "POST" });
  if (type !== "application/json" && type !== "application/x-protobuf")
    return refuse(415, GRPC.INVALID_ARGUMENT, `Unsupported content type ${JSON.stringify(type)}: send application/x-protobuf or application/json.`);
  if (contentEncoding !== "gzip" && contentEncoding !== "identity")
    return refuse(415, GRPC.INVALID_ARGUMENT, `Unsupported content encoding ${JSON.stringify(contentEncoding)}: send gzip, or none.`);
  const declared = Number(request.headers["content-length"] ?? NaN);
  if (declared > MAX_BODY_BYTES)
    return refuse(
      413,
      GRPC.RESOURCE_EXHAUSTED,
      `The export is ${declared} bytes, over the ${MAX_BODY_BYTES}: send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE).`,
    );
  return null;
}

/** An export that decoded but could not be kept, as the exporter is told: 503 for what it should send again (it drops a 500). */
function storeFailure(error: unknown): Failure {
  if (isReqwatchError(error, "BAD_INPUT")) return { status: 400, code: GRPC.INVALID_ARGUMENT, message: error.message };
  if (isReqwatchError(error, "TOO_LARGE")) return { status: 413, code: GRPC.RESOURCE_EXHAUSTED, message: error.message };
  const code = (error as { code?: string }).code ?? "";
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED")
    return { status: 503, code: GRPC.UNAVAILABLE, message: "The telemetry store is busy; try again shortly.", headers: { "retry-after": "2" } };
  // 503, which exporters retry (a 500 they drop): the export is kept once space is freed.
  if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB")
    return {
      status: 503,
      code: GRPC.UNAVAILABLE,
      message: "The telemetry store was damaged; it was set aside and a new one started: send this export again.",
      headers: { "retry-after": "1" },
    };
  if (code === "SQLITE_FULL" || code === "ENOSPC")
    return {
      status: 503,
      code: GRPC.UNAVAILABLE,
      message: "The disk is full: this export was not kept; send it again once space is freed.",
      headers: { "retry-after": "10" },
    };
  console.error("reqwatch: the OTLP receiver failed:", error);
  return { status: 500, code: GRPC.INTERNAL, message: "The receiver failed to keep this export; it was not kept." };
}

/**
 * Listen for OTLP/HTTP on `host:port` (0: any free port). A port already taken is not fatal: the
 * dashboard runs without a receiver, and its status says why.
 */
export function startOtlpReceiver(
  ingest: IngestExport,
  options: { port: number; host?: string; onStored?: (changed: number) => void; uploadDeadlineMs?: number },
): Promise<ReceiverHandle> {
  const host = options.host ?? "127.0.0.1";
  const server = http.createServer(otlpRequestListener(ingest, options.onStored, options.uploadDeadlineMs));
  server.keepAliveTimeout = 30_000;
  let status: ReceiverStatus = { url: null, error: null };
  return new Promise((resolve) => {
    const handle: ReceiverHandle = {
      status: () => status,
      close: () => {
        server.closeAllConnections();
        return new Promise((done) => server.close(() => done()));
      },
    };
    server.once("error", (error: NodeJS.ErrnoException) => {
      status = {
        url: null,
        error:
          error.code === "EADDRINUSE"
            ? `port ${options.port} is taken (another collector?): set --otlp-port or REQWATCH_OTLP_PORT to another, or off`
            : error.message,
      };
      resolve(handle);
    });
    server.listen(options.port, host, () => {
      const { port } = server.address() as AddressInfo;
      status = { url: `http://${host}:${port}`, error: null };
      resolve(handle);
    });
  });
}
