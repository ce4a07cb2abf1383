import type { IncomingMessage, ServerResponse } from "node:http";
import { ReqwatchError } from "../model/errors";
import { errorReply } from "../http/errorReply";
import { parseActivityQuery, parseRequestQuery, type RequestQuery } from "../model/requestQuery";
import { activityView } from "../views/activityView";
import { overviewView } from "../views/overviewView";
import { requestDetailView, requestsView, type RequestsView } from "../views/requestsView";
import { sourceRequestsView, sourceRequestView } from "../views/sourceRowsView";
import { queuesView } from "../views/queuesView";
import { sessionDetailView, sessionsView } from "../views/sessionsView";
import { parseSessionSource } from "../model/sessionSource";
import { resolveListFilters } from "../model/listFilters";
import type { TelemetrySessionView } from "../views/telemetrySessionsView";
import { workersView } from "../views/workersView";
import type { StateCounts } from "../db/queries/countByState";
import type { StuckSnapshot } from "./feedHub";
import type { IndexingProgress } from "../store/context";
import { answerEventStream } from "./eventStream";
import { answerExport } from "./exportStream";
import type { Runtime } from "./runtime";

/**
 * The body of GET /api/status: the counts per state and the stuck monitor's latest pass, which the
 * browser fetches when it polls instead of following the event stream.
 */
export interface StatusBody {
  counts: StateCounts;
  stuck: StuckSnapshot;
  /** How far indexing the folder is (a first open), null when the index is complete. */
  indexing: IndexingProgress | null;
}

type Answer = (runtime: Runtime, param: string, query: URLSearchParams, second: string) => unknown;
/** A route that writes its own response (a stream) instead of one JSON body. */
type Streamed = { stream: (runtime: Runtime, request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => void | Promise<void> };

/**
 * The dashboard's read API: what the pages poll and refetch on every change, and the event stream
 * that tells them when, answered with Node's own request and response, without the framework's
 * per-request work (see docs/ARCHITECTURE.md, "Serving"). Downloads and actions go on to Next.js.
 */
const ROUTES: readonly [RegExp, Answer | Streamed][] = [
  // The change feed as Server-Sent Events (lib/dashboard/eventStream.ts).
  [/^\/api\/events$/, { stream: answerEventStream }],
  // Every request the table's URL query matches, as CSV or JSON Lines, streamed (lib/dashboard/exportStream.ts).
  [/^\/api\/export$/, { stream: answerExport }],
  // What the header shows: counts per state and the stuck monitor's latest pass (the event stream sends the same).
  [/^\/api\/status$/, (runtime): StatusBody => ({ counts: runtime.tracker.countsByState(), stuck: runtime.feed.stuckSnapshot, indexing: runtime.indexing() })],
  // One page of the requests table; the query is the page's own URL query (lib/model/requestQuery.ts).
  [/^\/api\/requests$/, (runtime, _, query) => tableView(runtime, parseRequestQuery(query))],
  [
    /^\/api\/requests\/([^/]+)$/,
    (runtime, id) => requestDetailView(runtime.tracker, id, runtime.lastStuck()) ?? notFound(`Request ${id} does not exist (it may have been cleaned up).`),
  ],
  // The overview's last hour (throughput, latency percentiles) and newest failures.
  [/^\/api\/overview$/, (runtime) => overviewView(runtime.tracker)],
  // The charts: attempts ended, waits, run times and live states per interval over 1h, 24h or 7d (lib/views/activityView.ts).
  [
    /^\/api\/activity$/,
    (runtime, _, query) => {
      const { range, match } = parseActivityQuery(query);
      return activityView(runtime.tracker, range, match);
    },
  ],
  // Each workspace's queue (queued, processing, oldest wait) and its pause: the overview's table and the header's paused badge.
  [/^\/api\/queues$/, (runtime) => ({ queues: queuesView(runtime.tracker, runtime.lastStuck()) })],
  // What the table's workspace and session filters suggest as you type: known values starting with `prefix`.
  [/^\/api\/values\/(workspace|session)$/, (runtime, field, query) => ({ values: runtime.tracker.knownValues(field as "workspace" | "session", (query.get("prefix") ?? "").slice(0, 128)) })],
  // Every worker process seen in the claims, alive or gone and how we know (the workers page).
  [/^\/api\/workers$/, (runtime) => ({ workers: workersView(runtime.tracker) })],
  // The folder's sessions and those received over OpenTelemetry; one of them (`?source=otel`: a received one).
  [/^\/api\/sessions$/, (runtime) => ({ sessions: sessionsView(runtime.tracker, runtime.telemetrySessions) })],
  [
    /^\/api\/sessions\/([^/]+)$/,
    (runtime, id, query) => (parseSessionSource(query.get("source")) ? receivedSession(runtime, id) : (sessionDetailView(runtime.tracker, id) ?? notFound(`Session ${id} does not exist.`))),
  ],
  [/^\/api\/health$/, healthAnswer],
  // Other programs' queues the dashboard reads (--source): counts, stuck, errors; and one row of one.
  [/^\/api\/sources$/, (runtime) => ({ sources: runtime.sources.statuses() })],
  [
    /^\/api\/sources\/([^/]+)\/requests\/([^/]+)$/,
    (runtime, name, _, id) => sourceRequestView(runtime.sources.get(name), id) ?? notFound(`${name} has no row ${id} (it may have been deleted by its owner).`),
  ],
];

/** The requests table's page: the state folder's, or with `source`, that source's. */
export function tableView(runtime: Runtime, query: RequestQuery): RequestsView {
  return query.source ? sourceRequestsView(runtime.sources.get(query.source), query) : requestsView(runtime.tracker, query, runtime.lastStuck());
}

/** A session received over OpenTelemetry, as its page shows it. */
export function receivedSession(runtime: Runtime, id: string): TelemetrySessionView {
  // An id no session can have is the caller's mistake, whether or not anything is received.
  resolveListFilters({ sessionId: id });
  if (!runtime.telemetrySessions) notFound("This dashboard receives no OpenTelemetry (REQWATCH_OTLP_PORT=off), so it has no received sessions.");
  return runtime.telemetrySessions.get(id, runtime.tracker.options.now()) ?? notFound(`No telemetry received carries session ${id} (it may have been trimmed by the retention).`);
}

function notFound(message: string): never {
  throw new ReqwatchError("NOT_FOUND", message);
}

/** The Health page's figures, plus the feed and, for leak checks, the active resources. */
function healthAnswer(runtime: Runtime): unknown {
  const { tracker, feed } = runtime;
  const { unreadable, monitor, ...health } = runtime.health();
  return {
    // False while the state directory is missing (the server itself still answers).
    ok: health.guard.problem === null,
    ...health,
    unreadableFiles: unreadable.length,
    feed: { ...tracker.feedHead(), generation: health.generation, subscribers: feed.size },
    // What keeps the event loop alive (sockets, timers, watchers).
    activeResources: process.getActiveResourcesInfo().length,
    // Since the server started, in ms: a long synchronous task shows here as a high max.
    eventLoopDelay: runtime.eventLoopDelay(),
    monitor: { ...monitor, counts: runtime.monitor.lastPass()?.counts ?? null },
  };
}

function send(request: IncomingMessage, response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(json),
    // Live data: never from a cache.
    "Cache-Control": "no-store",
  });
  response.end(request.method === "HEAD" ? undefined : json);
}

/**
 * Answer `request` if it is for the read API or the event stream and return true; return false for
 * any other path. Only GET and HEAD: any other method gets 405.
 */
export function answerReadApi(runtime: () => Runtime, request: IncomingMessage, response: ServerResponse): boolean {
  const url = request.url ?? "/";
  const queryAt = url.indexOf("?");
  const pathname = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = () => new URLSearchParams(queryAt === -1 ? "" : url.slice(queryAt + 1));
  for (const [pattern, answer] of ROUTES) {
    const match = pattern.exec(pathname);
    if (!match) continue;
    try {
      if (request.method !== "GET" && request.method !== "HEAD") throw new ReqwatchError("METHOD_NOT_ALLOWED", `${pathname} answers GET only.`);
      if (typeof answer !== "function") {
        // An export reads its snapshot before it sends its headers: a failure there is still a clean reply.
        void answer.stream(runtime(), request, response, query())?.catch((error: unknown) => sendError(request, response, error));
        return true;
      }
      const [param, second] = [match[1], match[2]].map((segment) => (segment === undefined ? "" : decodePathSegment(segment)));
      send(request, response, 200, answer(runtime(), param!, query(), second!));
    } catch (error) {
      sendError(request, response, error);
    }
    return true;
  }
  return false;
}

function sendError(request: IncomingMessage, response: ServerResponse, error: unknown): void {
  const { status, body } = errorReply(error);
  send(request, response, status, body, status === 405 ? { Allow: "GET, HEAD" } : {});
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ReqwatchError("BAD_INPUT", "The path is not valid percent-encoding.");
  }
}
