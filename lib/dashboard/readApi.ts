import type { IncomingMessage, ServerResponse } from "node:http";
import { ReqwatchError } from "../model/errors";
import { errorReply } from "../http/errorReply";
import { parseActivityQuery, parseRequestQuery, type RequestQuery } from "../model/requestQuery";
import { activityView } from "../views/activityView";
import { telemetryActivityView } from "../views/telemetryActivityView";
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
import type { StuckSnapshot } from "./feedEvents";
import type { IndexingProgress } from "../store/context";
import { answerEventStream } from "./eventStream";
import { answerExport } from "./exportStream";
import type { Runtime } from "./runtime";
import { API_ROUTES, routePattern, type ReadApiPath } from "../http/apiRoutes";

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
 * Each path and what it is for is in the route table (lib/http/apiRoutes.ts); here, its answer.
 */
const ANSWERS: { readonly [path in ReadApiPath]: Answer | Streamed } = {
  "/api/events": { stream: answerEventStream },
  "/api/export": { stream: answerExport },
  "/api/status": (runtime): StatusBody => ({ counts: runtime.reader.countsByState(), stuck: runtime.feed.stuckSnapshot, indexing: runtime.indexing() }),
  "/api/requests": (runtime, _, query) => tableView(runtime, parseRequestQuery(query)),
  "/api/requests/:id": (runtime, id) =>
    requestDetailView(runtime.reader, id, runtime.lastStuck()) ?? notFound(`Request ${id} does not exist (it may have been cleaned up).`),
  "/api/overview": (runtime) => overviewView(runtime.reader),
  "/api/activity": (runtime, _, query) => {
    const { range, match, source } = parseActivityQuery(query);
    if (!source) return activityView(runtime.reader, range, match);
    if (!runtime.telemetrySessions)
      notFound(
        "This dashboard neither receives OpenTelemetry (REQWATCH_OTLP_PORT=off) nor reads agents' own files (REQWATCH_AGENT_FILES=off), so it has no lifecycles of theirs to chart.",
      );
    return telemetryActivityView(runtime.telemetrySessions.file, range, match, runtime.reader.options.now());
  },
  "/api/queues": (runtime) => ({ queues: queuesView(runtime.reader, runtime.lastStuck()) }),
  "/api/values/:field(workspace|session)": (runtime, field, query) => ({
    values: runtime.reader.knownValues(field as "workspace" | "session", (query.get("prefix") ?? "").slice(0, 128)),
  }),
  "/api/workers": (runtime) => ({ workers: workersView(runtime.reader) }),
  // The folder's sessions and those received over OpenTelemetry; one of them (`?source=otel`: a received one).
  "/api/sessions": (runtime) => ({ sessions: sessionsView(runtime.reader, runtime.telemetrySessions) }),
  "/api/sessions/:id": (runtime, id, query) =>
    parseSessionSource(query.get("source"))
      ? receivedSession(runtime, id)
      : (sessionDetailView(runtime.reader, id) ?? notFound(`Session ${id} does not exist.`)),
  "/api/health": healthAnswer,
  "/api/sources": (runtime) => ({ sources: runtime.sources.statuses() }),
  "/api/sources/:name/requests/:id": (runtime, name, _, id) =>
    sourceRequestView(runtime.sources.get(name), id) ?? notFound(`${name} has no row ${id} (it may have been deleted by its owner).`),
};

const ROUTES: readonly [RegExp, Answer | Streamed][] = API_ROUTES.flatMap((route) =>
  route.answeredBy === "readApi" ? [[routePattern(route.path), ANSWERS[route.path]] as const] : [],
);

/** The requests table's page: the state folder's, or with `source`, that source's. */
export function tableView(runtime: Runtime, query: RequestQuery): RequestsView {
  return query.source ? sourceRequestsView(runtime.sources.get(query.source), query) : requestsView(runtime.reader, query, runtime.lastStuck());
}

/** A session received over OpenTelemetry, as its page shows it. */
export function receivedSession(runtime: Runtime, id: string): TelemetrySessionView {
  // An id no session can have is the caller's mistake, whether or not anything is received.
  resolveListFilters({ sessionId: id });
  if (!runtime.telemetrySessions)
    notFound(
      "This dashboard neither receives OpenTelemetry (REQWATCH_OTLP_PORT=off) nor reads agents' own files (REQWATCH_AGENT_FILES=off), so it has no sessions of theirs.",
    );
  return (
    runtime.telemetrySessions.get(id, runtime.reader.options.now()) ??
    notFound(`No telemetry received carries session ${id} (it may have been trimmed by the retention).`)
  );
}

function notFound(message: string): never {
  throw new ReqwatchError("NOT_FOUND", message);
}

/** The Health page's figures, plus the feed and, for leak checks, the active resources. */
function healthAnswer(runtime: Runtime): unknown {
  const { reader, feed } = runtime;
  const { unreadable, monitor, ...health } = runtime.health();
  return {
    // False while the state directory is missing (the server itself still answers).
    ok: health.guard.problem === null,
    ...health,
    unreadableFiles: unreadable.length,
    feed: { ...reader.feedHead(), generation: health.generation, subscribers: feed.size },
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
