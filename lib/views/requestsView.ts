import type { RequestPage, RequestSummary, StuckRequest } from "../types";
import path from "node:path";
import { cancelDecision } from "../queue/cancel";
import { readResponseFile, responseFilePath, type ResponseRecord } from "../stateFiles/responseFile";
import { ipcDirExists } from "../stateFiles/ipcDir";
import { retryDecision } from "../queue/retry";
import { toListFilters, type RequestQuery } from "../model/requestQuery";
import { TEXT_FIELDS, type RequestRecord, type TextField } from "../model/requestFormat";
import { canTransition } from "../model/states";
import { stateEnteredAt } from "../model/transition";
import { stuckReasonOf } from "./stuckReason";
import type { Reader } from "../roles/reader";

/** A table row: the list row and, when the monitor flagged it, why it is stuck. */
export interface RequestRow extends RequestSummary {
  stuckReason: string | null;
  /** The source the row comes from (lib/views/sourceRowsView.ts); absent for the state folder's. */
  source?: string;
  /** For a source's row: something worth knowing that is not stuck (a failure at the retry limit). */
  note?: string | null;
}

export interface RequestsView {
  items: RequestRow[];
  nextCursor: string | null;
}

/** One page of the requests table for a URL query, with the stuck monitor's reasons on its rows. */
export function requestsView(reader: Reader, query: RequestQuery, stuck: readonly StuckRequest[], limit = 50): RequestsView {
  const byId = new Map(stuck.map((s) => [s.requestId, s]));
  const page: RequestPage = reader.list(toListFilters(query, reader.options.now(), [...byId.keys()], limit));
  const items = page.items.map((item) => ({ ...item, stuckReason: stuckReasonOf(byId, item) }));
  // "Stuck only": a request that moved on since the monitor's pass is not stuck any more.
  return { items: query.stuck ? items.filter((item) => item.stuckReason !== null) : items, nextCursor: page.nextCursor };
}

interface ActionAvailability {
  allowed: boolean;
  /** Why it is or is not allowed, in words. */
  reason: string;
}

/**
 * The detail page shows at most this many characters of each text field: a 50 MB output would make
 * every render and every refetch of the page move 50 MB. The whole text is a download away.
 */
export const DISPLAY_TEXT_CHARS = 100_000;

/** A gateway's response file for the request, as the page shows it: its content, or why there is none to show. */
export type ResponseView = { file: string } & (
  { status: "missing" } | { status: "unreadable"; reason: string } | { status: "ok"; response: ResponseRecord; outputChars: number | null }
);

export interface RequestDetailView {
  /** The request, its text fields cut to DISPLAY_TEXT_CHARS. */
  request: RequestRecord;
  /** The full length, in characters, of each text field that was cut. */
  truncated: Partial<Record<TextField, number>>;
  stuckReason: string | null;
  /** When it entered its state (the stuck monitor's reasons are for a state and this moment). */
  stateSince: number;
  /** Its response file in the gateway's ipc folder; null when there is no ipc folder. */
  response: ResponseView | null;
  actions: { retry: ActionAvailability; cancel: ActionAvailability };
}

/** The whole output of the request's response file (the download the page links to when it shows it cut); null when there is none. */
export function responseOutput(reader: Reader, request: RequestRecord): string | null {
  const { ipcDir } = reader.stateDir;
  const file = ipcDirExists(ipcDir) && responseFilePath(ipcDir, request.workspace, request.requestId);
  const read = file ? readResponseFile(file, request.requestId) : null;
  return read?.status === "ok" ? (read.response.output ?? null) : null;
}

/** Read the request's response file now (the file is the truth), leniently: missing or unreadable is said, never thrown. */
function responseView(reader: Reader, request: RequestRecord): ResponseView | null {
  const { ipcDir, root } = reader.stateDir;
  if (!ipcDirExists(ipcDir)) return null;
  const file = responseFilePath(ipcDir, request.workspace, request.requestId);
  if (!file) return null;
  // Relative to the state folder: no absolute path reaches the browser.
  const shown = path.relative(root, file);
  const read = readResponseFile(file, request.requestId);
  if (!read) return { file: shown, status: "missing" };
  if (read.status === "unreadable") return { file: shown, status: "unreadable", reason: read.reason };
  const output = read.response.output;
  if (typeof output === "string" && output.length > DISPLAY_TEXT_CHARS) {
    return { file: shown, status: "ok", response: { ...read.response, output: output.slice(0, DISPLAY_TEXT_CHARS) }, outputChars: output.length };
  }
  return { file: shown, status: "ok", response: read.response, outputChars: null };
}

/** A request with what the detail page needs beside it: its stuck reason and the actions its state allows. */
export function requestDetailView(reader: Reader, requestId: string, stuck: readonly StuckRequest[]): RequestDetailView | null {
  const request = reader.get(requestId);
  if (!request) return null;
  // The transition table says whether a state can go back to queued at all; retryDecision says whether a person may do it now.
  const decision = canTransition(request.state, "queued")
    ? retryDecision(request)
    : { retry: false, reason: `a ${request.state} request cannot go back to queued` };
  const cancelling = cancelDecision(request);
  const stateSince = stateEnteredAt(request);
  const truncated: RequestDetailView["truncated"] = {};
  const shown = { ...request };
  for (const field of TEXT_FIELDS) {
    const text = request[field];
    if (typeof text === "string" && text.length > DISPLAY_TEXT_CHARS) {
      truncated[field] = text.length;
      shown[field] = text.slice(0, DISPLAY_TEXT_CHARS);
    }
  }
  return {
    request: shown,
    truncated,
    stuckReason: stuckReasonOf(stuck, { requestId, state: request.state, stateSince }),
    stateSince,
    response: responseView(reader, request),
    actions: { retry: { allowed: decision.retry, reason: decision.reason }, cancel: { allowed: cancelling.cancel, reason: cancelling.reason } },
  };
}
