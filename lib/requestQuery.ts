import { parseDuration } from "./duration";
import { ReqwatchError } from "./errors";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "./ids";
import { SORT_FIELDS, type ListFilters } from "./listFilters";
import { STATES, type State } from "./states";

/**
 * The requests table's view as it lives in the URL (`/requests?states=failed,queued&stuck=1`), so
 * a view can be shared and survives a reload. One parser and one writer, used by the page, the
 * API route and the browser. Pure: no Node or Next imports, so it runs in the browser too.
 */
export interface RequestQuery {
  states: State[];
  workspace?: string;
  session?: string;
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

function time(text: string, name: string): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) bad(`Invalid ${name}: ${JSON.stringify(text)} is not a date and time.`);
  return ms;
}

/** Parse URL search params; anything unknown or malformed is a BAD_INPUT naming the parameter. */
export function parseRequestQuery(params: URLSearchParams): RequestQuery {
  const query: RequestQuery = { ...DEFAULT_QUERY, states: [] };
  const states = params.get("states");
  if (states) {
    for (const state of states.split(",")) {
      if (!STATES.includes(state as State)) bad(`Unknown state "${state}" in states; use ${STATES.join(", ")}.`);
      if (!query.states.includes(state as State)) query.states.push(state as State);
    }
  }
  const workspace = params.get("workspace");
  if (workspace) {
    if (!WORKSPACE_PATTERN.test(workspace)) bad("Invalid workspace: 1 to 64 letters, digits, _ or -.");
    query.workspace = workspace;
  }
  const session = params.get("session");
  if (session) {
    if (!REQUEST_ID_PATTERN.test(session)) bad("Invalid session: 1 to 128 letters, digits, _ or -.");
    query.session = session;
  }
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
  if (q) {
    if (q.length > 500) bad("Invalid q: the search text is longer than 500 characters.");
    query.q = q;
  }
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
  if (sort) {
    if (!SORT_FIELDS.includes(sort as RequestQuery["sort"])) bad(`Invalid sort: use ${SORT_FIELDS.join(" or ")}.`);
    query.sort = sort as RequestQuery["sort"];
  }
  const order = params.get("order");
  if (order) {
    if (order !== "asc" && order !== "desc") bad('Invalid order: use "asc" or "desc".');
    query.order = order;
  }
  const cursor = params.get("cursor");
  if (cursor) query.cursor = cursor;
  return query;
}

/** The URL form of a query: only what differs from the default, in a stable order. */
export function requestQueryParams(query: RequestQuery): URLSearchParams {
  const params = new URLSearchParams();
  if (query.states.length) params.set("states", query.states.join(","));
  if (query.workspace) params.set("workspace", query.workspace);
  if (query.session) params.set("session", query.session);
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
  const filters = toListFilters({ ...query, cursor: undefined }, now, stuckIds);
  return {
    states: filters.states,
    workspace: filters.workspace,
    sessionId: filters.sessionId,
    createdFrom: filters.createdFrom,
    createdTo: filters.createdTo,
    ids: filters.ids,
    text: filters.text,
    callbackFailed: filters.callbackFailed,
  };
}
