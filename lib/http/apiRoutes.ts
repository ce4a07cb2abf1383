/**
 * Who answers a route under /api: the dashboard server's read API, on Node's own request and
 * response before Next.js sees it (lib/dashboard/readApi.ts: what the pages poll, the event stream,
 * the export), or a Next.js route handler (app/api/<path>/route.ts: downloads and actions).
 */
type Answerer = "readApi" | "next";

export interface ApiRoute {
  /** `/api/requests/:id`; a parameter that takes only some values lists them: `:field(workspace|session)`. */
  path: string;
  /** GET routes answer HEAD too. */
  methods: readonly ("GET" | "POST")[];
  answeredBy: Answerer;
  about: string;
}

/**
 * Every route of the HTTP API, whichever layer answers it: the read API answers exactly its own
 * (readApi.ts maps each to its answer), app/api holds exactly the others (tests/unit/apiRoutes.test.ts
 * reads the folder), and the hostile-request tests try each one.
 */
export const API_ROUTES = [
  { path: "/api/events", methods: ["GET"], answeredBy: "readApi", about: "the change feed as Server-Sent Events (lib/dashboard/eventStream.ts)" },
  {
    path: "/api/export",
    methods: ["GET"],
    answeredBy: "readApi",
    about: "every request the table's URL query matches, as CSV or JSON Lines, streamed (lib/dashboard/exportStream.ts)",
  },
  {
    path: "/api/status",
    methods: ["GET"],
    answeredBy: "readApi",
    about: "what the header shows: counts per state and the stuck monitor's latest pass (the event stream sends the same)",
  },
  {
    path: "/api/requests",
    methods: ["GET"],
    answeredBy: "readApi",
    about: "one page of the requests table; the query is the page's own URL query (lib/model/requestQuery.ts)",
  },
  { path: "/api/requests/:id", methods: ["GET"], answeredBy: "readApi", about: "one request, with its history and why it is stuck" },
  { path: "/api/requests/:id/download/:part", methods: ["GET"], answeredBy: "next", about: "a request's prompt, output or whole file as a download" },
  { path: "/api/overview", methods: ["GET"], answeredBy: "readApi", about: "the overview's last hour (throughput, latency percentiles) and newest failures" },
  {
    path: "/api/activity",
    methods: ["GET"],
    answeredBy: "readApi",
    about:
      "the charts: attempts ended, waits, run times and live states per interval over 1h, 24h or 7d; with source=otel, of the lifecycles received over OpenTelemetry, with their cost and tokens",
  },
  { path: "/api/queues", methods: ["GET"], answeredBy: "readApi", about: "each workspace's queue (queued, processing, oldest wait) and its pause" },
  { path: "/api/queues/:workspace", methods: ["POST"], answeredBy: "next", about: "pause or resume a workspace's queue" },
  {
    path: "/api/values/:field(workspace|session)",
    methods: ["GET"],
    answeredBy: "readApi",
    about: "what the table's workspace and session filters suggest as you type",
  },
  { path: "/api/workers", methods: ["GET"], answeredBy: "readApi", about: "every worker process seen in the claims, alive or gone and how we know" },
  { path: "/api/sessions", methods: ["GET"], answeredBy: "readApi", about: "the sessions, newest first" },
  { path: "/api/sessions/:id", methods: ["GET"], answeredBy: "readApi", about: "one session's context" },
  { path: "/api/health", methods: ["GET"], answeredBy: "readApi", about: "the Health page's figures, the feed and the active resources" },
  { path: "/api/sources", methods: ["GET"], answeredBy: "readApi", about: "other programs' queues the dashboard reads (--source): counts, stuck, errors" },
  { path: "/api/sources/:name/requests/:id", methods: ["GET"], answeredBy: "readApi", about: "one row of another program's queue" },
  {
    path: "/api/sources/:name/actions",
    methods: ["POST"],
    answeredBy: "next",
    about: "retry or delete rows of another program's queue, where its owner's recovery does the same",
  },
  {
    path: "/api/usage",
    methods: ["GET"],
    answeredBy: "next",
    about: "the agents' tokens and cost from their own files, by day, month, session, project or model (the Usage page, reqwatch usage)",
  },
  { path: "/api/actions", methods: ["GET", "POST"], answeredBy: "next", about: "the audit log; run a bulk action (retry, cancel, cleanup)" },
  { path: "/api/actions/dry-run", methods: ["POST"], answeredBy: "next", about: "a bulk action's dry run" },
  { path: "/api/actions/:id", methods: ["GET"], answeredBy: "next", about: "one audit entry, with live progress while its action runs" },
  { path: "/api/actions/:id/undo", methods: ["POST"], answeredBy: "next", about: "undo an action" },
  { path: "/api/actions/:id/undo/dry-run", methods: ["POST"], answeredBy: "next", about: "an undo's dry run" },
] as const satisfies readonly ApiRoute[];

export type ReadApiPath = Extract<(typeof API_ROUTES)[number], { answeredBy: "readApi" }>["path"];

/** The route's path as a regular expression, a group for each parameter (still percent-encoded). */
export function routePattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      const param = /^:\w+(?:\(([\w|-]+)\))?$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return param[1] === undefined ? "([^/]+)" : `(${param[1]})`;
    })
    .join("/");
  return new RegExp(`^${source}$`);
}
