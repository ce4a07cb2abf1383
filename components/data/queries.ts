import { queryOptions } from "@tanstack/react-query";
import type { ActionDryRun } from "@/lib/actions/actionDryRun";
import type { ActionBody } from "@/lib/actions/actionInput";
import type { AuditEntry } from "@/lib/db/auditLog";
import { ACTION_TOKEN_HEADER } from "@/lib/http/actionToken";
import { requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";
import type { RequestDetailView, RequestsView } from "@/lib/views/requestsView";
import type { QueueRow } from "@/lib/views/queuesView";
import type { WorkerView } from "@/lib/views/workersView";
import type { ActivityView } from "@/lib/views/activityView";
import type { OverviewView } from "@/lib/views/overviewView";
import type { ActivityRange, WorkspaceMatch } from "@/lib/model/activity";
import type { SessionDetailView, SessionRow } from "@/lib/views/sessionsView";
import type { SessionSource } from "@/lib/model/sessionSource";
import type { TelemetrySessionView } from "@/lib/views/telemetrySessionsView";
import type { StatusBody } from "@/lib/dashboard/readApi";
import type { SourceStatus } from "@/lib/sources/liveSource";
import type { SourceRequestView } from "@/lib/views/sourceRowsView";

type ActivitySource = ActivityView["source"];

/** Every query key, from one factory: the live feed invalidates by these prefixes. */
export const requestKeys = {
  all: ["requests"] as const,
  lists: () => [...requestKeys.all, "list"] as const,
  list: (query: RequestQuery) => [...requestKeys.lists(), requestQueryParams(query).toString()] as const,
  details: () => [...requestKeys.all, "detail"] as const,
  detail: (id: string) => [...requestKeys.details(), id] as const,
};

export const statusKeys = {
  counts: ["status", "counts"] as const,
  stuck: ["status", "stuck"] as const,
  indexing: ["status", "indexing"] as const,
};

export const sessionKeys = {
  all: ["sessions"] as const,
  list: () => [...sessionKeys.all, "list"] as const,
  detail: (id: string) => [...sessionKeys.all, "detail", id] as const,
  /** A session received over OpenTelemetry: refetched when the `otel` source changes, not with the folder's. */
  received: (source: SessionSource, id?: string) => [...sessionKeys.all, "received", source, ...(id === undefined ? [] : [id])] as const,
};

export const queueKeys = {
  all: ["queues"] as const,
};

export const overviewKeys = {
  all: ["overview"] as const,
};

export const activityKeys = {
  all: ["activity"] as const,
  chart: (range: ActivityRange, match: WorkspaceMatch, source: ActivitySource) => [...activityKeys.all, range, match, source] as const,
};

export const workerKeys = {
  all: ["workers"] as const,
};

const valueKeys = {
  known: (field: "workspace" | "session", prefix: string) => ["values", field, prefix] as const,
};

export const auditKeys = {
  all: ["audit"] as const,
  list: () => [...auditKeys.all, "list"] as const,
  entry: (id: number) => [...auditKeys.all, "entry", id] as const,
};

/** An action's dry run: never shared or kept, so nothing invalidates it by prefix. */
const dryRunKeys = {
  of: (input: ActionRequest) => ["dry run", input] as const,
};

/** The server's `{ error: { code, message } }`, as an Error the UI can show. */
class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function parse<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => null)) as ({ error?: { code: string; message: string } } & T) | null;
  if (!response.ok || !body)
    throw new ApiError(body?.error?.code ?? "HTTP", body?.error?.message ?? `The server answered ${response.status}.`, response.status);
  return body;
}

async function getJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  return parse<T>(await fetch(url, { signal, cache: "no-store" }));
}

/** A state-changing call: POST, same origin, with the per-launch token the page was rendered with. */
export async function postJson<T>(url: string, token: string, body?: unknown): Promise<T> {
  return parse<T>(
    await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", [ACTION_TOKEN_HEADER]: token },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

export function queuesOptions() {
  return queryOptions({
    queryKey: queueKeys.all,
    queryFn: async ({ signal }) => (await getJson<{ queues: QueueRow[] }>("/api/queues", signal)).queues,
  });
}

export function overviewOptions() {
  return queryOptions({ queryKey: overviewKeys.all, queryFn: ({ signal }) => getJson<OverviewView>("/api/overview", signal) });
}

/** The charts over `range` for the workspaces `match` picks, of the folder's requests or (`otel`) the received lifecycles. */
export function activityOptions(range: ActivityRange, match: WorkspaceMatch, source: ActivitySource = "folder") {
  const params = new URLSearchParams({ range });
  if (source === "otel") params.set("source", "otel");
  if (match && "workspace" in match) params.set("workspace", match.workspace);
  if (match && "workspacePrefix" in match) params.set("workspacePrefix", match.workspacePrefix);
  return queryOptions({
    queryKey: activityKeys.chart(range, match, source),
    queryFn: ({ signal }) => getJson<ActivityView>(`/api/activity?${params}`, signal),
  });
}

export function workersOptions() {
  return queryOptions({
    queryKey: workerKeys.all,
    queryFn: async ({ signal }) => (await getJson<{ workers: WorkerView[] }>("/api/workers", signal)).workers,
  });
}

/** Known workspaces or sessions starting with `prefix`: the filters' suggestions. */
export function knownValuesOptions(field: "workspace" | "session", prefix: string) {
  return queryOptions({
    queryKey: valueKeys.known(field, prefix),
    queryFn: async ({ signal }) => (await getJson<{ values: string[] }>(`/api/values/${field}?prefix=${encodeURIComponent(prefix)}`, signal)).values,
    staleTime: 10_000,
  });
}

/** Pause or resume a workspace's queue (audited as the dashboard's). */
export async function setQueuePaused(token: string, workspace: string, paused: boolean): Promise<void> {
  await postJson(`/api/queues/${encodeURIComponent(workspace)}`, token, { action: paused ? "pause" : "resume" });
}

export function requestListOptions(query: RequestQuery) {
  return queryOptions({
    queryKey: requestKeys.list(query),
    queryFn: ({ signal }) => getJson<RequestsView>(`/api/requests?${requestQueryParams(query)}`, signal),
  });
}

export function requestDetailOptions(id: string) {
  return queryOptions({
    queryKey: requestKeys.detail(id),
    queryFn: ({ signal }) => getJson<RequestDetailView>(`/api/requests/${encodeURIComponent(id)}`, signal),
  });
}

/** Counts and stuck come from the event stream; these fetch them when polling instead. */
export function countsOptions() {
  return queryOptions({
    queryKey: statusKeys.counts,
    queryFn: async ({ signal }) => (await getJson<StatusBody>("/api/status", signal)).counts,
  });
}

export function stuckOptions() {
  return queryOptions({
    queryKey: statusKeys.stuck,
    queryFn: async ({ signal }) => (await getJson<StatusBody>("/api/status", signal)).stuck,
  });
}

export function indexingOptions() {
  return queryOptions({
    queryKey: statusKeys.indexing,
    queryFn: async ({ signal }) => (await getJson<StatusBody>("/api/status", signal)).indexing,
  });
}

export function sessionListOptions() {
  return queryOptions({
    queryKey: sessionKeys.list(),
    queryFn: async ({ signal }) => (await getJson<{ sessions: SessionRow[] }>("/api/sessions", signal)).sessions,
  });
}

export function sessionDetailOptions(id: string) {
  return queryOptions({
    queryKey: sessionKeys.detail(id),
    queryFn: ({ signal }) => getJson<SessionDetailView>(`/api/sessions/${encodeURIComponent(id)}`, signal),
  });
}

export function receivedSessionOptions(source: SessionSource, id: string) {
  return queryOptions({
    queryKey: sessionKeys.received(source, id),
    queryFn: ({ signal }) => getJson<TelemetrySessionView>(`/api/sessions/${encodeURIComponent(id)}?source=${source}`, signal),
  });
}

export function auditListOptions() {
  return queryOptions({
    queryKey: auditKeys.list(),
    queryFn: async ({ signal }) => (await getJson<{ entries: AuditEntry[] }>("/api/actions", signal)).entries,
  });
}

export function auditEntryOptions(id: number) {
  return queryOptions({
    queryKey: auditKeys.entry(id),
    queryFn: async ({ signal }) => (await getJson<{ entry: AuditEntry }>(`/api/actions/${id}`, signal)).entry,
  });
}

/** What the browser asks for: an action's body as the server's schema defines it (a dry run's id is added by `runAction`), or the undo of a cleanup. */
export type ActionRequest = ActionBody | { kind: "undo"; entry: number };

const dryRunAction = (token: string, input: ActionRequest) =>
  input.kind === "undo"
    ? postJson<ActionDryRun>(`/api/actions/${input.entry}/undo/dry-run`, token)
    : postJson<ActionDryRun>("/api/actions/dry-run", token, input);

/** The dry run a dialog shows: asked for afresh each time it opens, and not retried (a refusal is the answer). */
export function actionDryRunOptions(token: string, input: ActionRequest) {
  return queryOptions({ queryKey: dryRunKeys.of(input), queryFn: () => dryRunAction(token, input), staleTime: 0, gcTime: 0, retry: false });
}

/** Run an action after its dry run, naming it: the run acts on what the dry run described and on no other request. */
export async function runAction(token: string, input: ActionRequest, dryRun: ActionDryRun): Promise<AuditEntry> {
  if (input.kind === "undo") return (await postJson<{ entry: AuditEntry }>(`/api/actions/${input.entry}/undo`, token)).entry;
  return (await postJson<{ entry: AuditEntry }>("/api/actions", token, { ...input, dryRunId: dryRun.dryRunId })).entry;
}

export const sourceKeys = {
  all: ["sources"] as const,
  list: () => [...sourceKeys.all, "list"] as const,
  request: (source: string, id: string) => [...sourceKeys.all, "request", source, id] as const,
};

/** Other programs' queues the dashboard reads; the event stream's `sources` event keeps this current. */
export function sourcesOptions() {
  return queryOptions({
    queryKey: sourceKeys.list(),
    queryFn: async ({ signal }) => (await getJson<{ sources: SourceStatus[] }>("/api/sources", signal)).sources,
    staleTime: Infinity,
  });
}

export function sourceRequestOptions(source: string, id: string) {
  return queryOptions({
    queryKey: sourceKeys.request(source, id),
    queryFn: ({ signal }) => getJson<SourceRequestView>(`/api/sources/${encodeURIComponent(source)}/requests/${encodeURIComponent(id)}`, signal),
  });
}
