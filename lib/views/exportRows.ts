import type { RequestSummary } from "../db/queries/listRequests";
import { ReqwatchError } from "../model/errors";
import { MAX_PAGE_SIZE, type ListFilters } from "../model/listFilters";
import { toMatchFilter, type RequestQuery } from "../model/requestQuery";
import type { StuckRequest } from "../monitor/monitorPass";
import type { Tracker } from "../tracker";

export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What an export covers: a list's filters and order, without paging (it walks every page). */
export type ExportFilter = Omit<ListFilters, "limit" | "cursor">;

/** The table's columns, in its order; times are ISO in CSV and epoch ms in JSON Lines (as the API). */
const COLUMNS = ["requestId", "workspace", "state", "previousState", "stateSince", "createdAt", "lastUpdatedAt", "attempt", "sessionId", "chatId", "model", "tokens", "version"] as const;
const TIMES = new Set<string>(["stateSince", "createdAt", "lastUpdatedAt"]);

export function exportFormat(value: string): ExportFormat {
  if (!(EXPORT_FORMATS as readonly string[]).includes(value)) throw new ReqwatchError("BAD_INPUT", `Invalid format "${value.slice(0, 40)}": use ${EXPORT_FORMATS.join(" or ")}.`);
  return value as ExportFormat;
}

/** Every request the table's URL query matches now (any page), in the table's order. */
export function exportFilterOf(query: RequestQuery, now: number, stuck: readonly StuckRequest[]): ExportFilter {
  return { ...toMatchFilter(query, now, stuck.map((row) => row.requestId)), sort: query.sort, order: query.order };
}

/** One CSV cell (RFC 4180); a cell a spreadsheet would run as a formula starts with a quote mark instead. */
function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvLine(row: RequestSummary): string {
  return COLUMNS.map((column) => csvCell(TIMES.has(column) ? new Date(row[column] as number).toISOString() : row[column])).join(",");
}

/**
 * The export as text chunks, one per page of `pageSize` rows (a CSV header first): the caller
 * writes each chunk and may wait between them, so memory stays one page whatever the size.
 */
export function* exportChunks(tracker: Tracker, filter: ExportFilter, format: ExportFormat, pageSize = MAX_PAGE_SIZE): Generator<string> {
  if (format === "csv") yield `${COLUMNS.join(",")}\r\n`;
  let cursor: string | undefined;
  do {
    const page = tracker.list({ ...filter, limit: pageSize, ...(cursor !== undefined && { cursor }) });
    if (page.items.length) yield format === "csv" ? `${page.items.map(csvLine).join("\r\n")}\r\n` : `${page.items.map((row) => JSON.stringify(row)).join("\n")}\n`;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

export const EXPORT_CONTENT_TYPE: Record<ExportFormat, string> = { csv: "text/csv; charset=utf-8", jsonl: "application/x-ndjson; charset=utf-8" };
