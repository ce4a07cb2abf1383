import { ACTIVITY_RANGES, isActivityRange, type ActivityRange, type WorkspaceMatch } from "./activity";
import { parseDuration } from "./duration";
import { ReqwatchError } from "./errors";
import type { z } from "zod";
import { filterFields, type SORT_FIELDS, type ListFilters } from "./listFilters";
import type { State } from "./states";

/**
 * The requests table's view as it lives in the URL (`/requests?states=failed,queued&stuck=1`), so
 * a view can be shared and survives a reload. One parser and one writer, used by the page, the
 * API route and the browser (no Node or Next imports). Its fields are checked by the list filters'
 * own checks (`filterFields`), which bring zod into the browser's bundle with them.
 */
export interface RequestQuery {
  /** Another program's queue the dashboard reads (`--source`), by its name; absent: the state folder. */
  source?: string;
  states: State[];
  /** This workspace exactly (a link: a queue, a request's workspace). */
  workspace?: string;
  session?: string;
  /** Workspaces or sessions that start with this: what the filter inputs write as people type. */
  workspacePrefix?: string;
  sessionPrefix?: string;
  /** Created within this long before now (`15m`, `24h`), or between `from` and `to` (ISO times). */
  within?: string;
  from?: string;
  to?: string;
  stuck: boolean;
  /** "failed": only requests whose callback delivery failed (their own, or a gateway's response file). */
  callback?: "failed";
  /** Words to find in prompt, output or error. */
  q?: string;
  sort: (typeof SORT_FIELDS)[number];
  order: "asc" | "desc";
  cursor?: string;
}

export const DEFAULT_QUERY: RequestQuery = { states: [], stuck: false, sort: "updatedAt", order: "desc" };

function bad(message: string): never {
  throw new ReqwatchError("BAD_INPUT", message);
}

/** A parameter checked by its list filter's check, with the same message. */
function checked<T>(schema: z.ZodType<T>, value: string, name: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) bad(`Invalid ${name}: ${parsed.error.issues[0]?.message ?? "invalid value"}.`);
  return parsed.data;
}

function time(text: string, name: string): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) bad(`Invalid ${name}: ${JSON.stringify(text)} is not a date and time.`);
  return ms;
}

/** The charts' query (GET /api/activity): a range, and the workspace filter of the table they sit over. */
export function parseActivityQuery(params: URLSearchParams): { range: ActivityRange; match: WorkspaceMatch; source: "otel" | null } {
  const range = params.get("range") ?? "1h";
  if (!isActivityRange(range)) bad(`Invalid range: ${JSON.stringify(range)}; one of ${Object.keys(ACTIVITY_RANGES).join(", ")}.`);
  const source = params.get("source");
  // The charts count the folder's requests, or what the OpenTelemetry receiver kept: another program's queue has no history to chart.
  if (source !== null && source !== "otel")
    bad(
      `Invalid source: ${JSON.stringify(source.slice(0, 64))}; the charts draw the state folder's requests (no source) or otel, the lifecycles received over OpenTelemetry.`,
    );
  const workspace = params.get("workspace");
  const workspacePrefix = params.get("workspacePrefix");
  if (workspace && workspacePrefix) bad("Use workspace or workspacePrefix, not both: a chart counts one workspace, or every one a prefix matches.");
  const match: WorkspaceMatch = workspace
    ? { workspace: checked(filterFields.workspace, workspace, "workspace") }
    : workspacePrefix
      ? { workspacePrefix: checked(filterFields.workspace, workspacePrefix, "workspacePrefix") }
      : null;
  return { range, match, source };
}

/** Parse URL search params; anything unknown or malformed is a BAD_INPUT naming the parameter. */
export function parseRequestQuery(params: URLSearchParams): RequestQuery {
  const query: RequestQuery = { ...DEFAULT_QUERY, states: [] };
  const source = params.get("source");
  if (source) query.source = checked(filterFields.workspace, source, "source");
  const states = params.get("states");
  if (states) {
    for (const state of states.split(",").map((text) => checked(filterFields.state, text, "states"))) {
      if (!query.states.includes(state)) query.states.push(state);
    }
  }
  const workspace = params.get("workspace");
  if (workspace) query.workspace = checked(filterFields.workspace, workspace, "workspace");
  const session = params.get("session");
  if (session) query.session = checked(filterFields.sessionId, session, "session");
  const workspacePrefix = params.get("workspacePrefix");
  if (workspacePrefix) query.workspacePrefix = checked(filterFields.workspace, workspacePrefix, "workspacePrefix");
  const sessionPrefix = params.get("sessionPrefix");
  if (sessionPrefix) query.sessionPrefix = checked(filterFields.sessionId, sessionPrefix, "sessionPrefix");
  const within = params.get("within");
  if (within) {
    parseDuration(within, "within");
    query.within = within;
  }
  for (const key of ["from", "to"] as const) {
    const value = params.get(key);
    if (value) {
      time(value, key);
      query[key] = value;
    }
  }
  const q = params.get("q")?.trim();
  if (q) query.q = checked(filterFields.text, q, "q");
  const stuck = params.get("stuck");
  if (stuck !== null && stuck !== "" && stuck !== "0") {
    if (stuck !== "1") bad('Invalid stuck: use "1" or leave it out.');
    query.stuck = true;
  }
  const callback = params.get("callback");
  if (callback) {
    if (callback !== "failed") bad('Invalid callback: use "failed" or leave it out.');
    query.callback = "failed";
  }
  const sort = params.get("sort");
  if (sort) query.sort = checked(filterFields.sort, sort, "sort");
  const order = params.get("order");
  if (order) query.order = checked(filterFields.order, order, "order");
  const cursor = params.get("cursor");
  if (cursor) query.cursor = cursor;
  return query;
}

/** The URL form of a query: only what differs from the default, in a stable order. */
export function requestQueryParams(query: RequestQuery): URLSearchParams {
  const params = new URLSearchParams();
  if (query.source) params.set("source", query.source);
  if (query.states.length) params.set("states", query.states.join(","));
  if (query.workspace) params.set("workspace", query.workspace);
  if (query.session) params.set("session", query.session);
  if (query.workspacePrefix) params.set("workspacePrefix", query.workspacePrefix);
  if (query.sessionPrefix) params.set("sessionPrefix", query.sessionPrefix);
  if (query.within) params.set("within", query.within);
  if (query.from) params.set("from", query.from);
  if (query.to) params.set("to", query.to);
  if (query.stuck) params.set("stuck", "1");
  if (query.callback) params.set("callback", query.callback);
  if (query.q) params.set("q", query.q);
  if (query.sort !== DEFAULT_QUERY.sort) params.set("sort", query.sort);
  if (query.order !== DEFAULT_QUERY.order) params.set("order", query.order);
  if (query.cursor) params.set("cursor", query.cursor);
  return params;
}

/** The list filters a query means at `now`; `stuckIds` is the monitor's latest stuck list. */
export function toListFilters(query: RequestQuery, now: number, stuckIds: readonly string[], limit = 50): ListFilters {
  const createdFrom = query.within ? now - parseDuration(query.within, "within") : query.from ? time(query.from, "from") : undefined;
  return {
    states: query.states.length ? query.states : undefined,
    workspace: query.workspace,
    sessionId: query.session,
    workspacePrefix: query.workspacePrefix,
    sessionPrefix: query.sessionPrefix,
    createdFrom,
    createdTo: query.to ? time(query.to, "to") : undefined,
    ids: query.stuck ? [...stuckIds] : undefined,
    callbackFailed: query.callback === "failed" ? true : undefined,
    text: query.q,
    sort: query.sort,
    order: query.order,
    cursor: query.cursor,
    limit,
  };
}

/** Every request the query matches now, whatever the page: what "retry all matching" acts on. */
export function toMatchFilter(query: RequestQuery, now: number, stuckIds: readonly string[]): Omit<ListFilters, "limit" | "cursor" | "sort" | "order"> {
  // Never the folder's requests in a source's stead: actions and exports take the folder's only.
  if (query.source) {
    bad(
      `Rows of ${query.source} are read only here: reqwatch does not act on another program's queue, and exports the state folder's requests (\`reqwatch list --source <source> --json\` pages through a source's rows).`,
    );
  }
  const filters = toListFilters({ ...query, cursor: undefined }, now, stuckIds);
  return {
    states: filters.states,
    workspace: filters.workspace,
    sessionId: filters.sessionId,
    workspacePrefix: filters.workspacePrefix,
    sessionPrefix: filters.sessionPrefix,
    createdFrom: filters.createdFrom,
    createdTo: filters.createdTo,
    ids: filters.ids,
    text: filters.text,
    callbackFailed: filters.callbackFailed,
  };
}
