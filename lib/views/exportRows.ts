import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { RequestSummary, StuckRequest } from "../types";
import { openSpool, type Spool } from "../fs/spoolFile";
import { ReqwatchError } from "../model/errors";
import { MAX_PAGE_SIZE, type ListFilters } from "../model/listFilters";
import { toMatchFilter, type RequestQuery } from "../model/requestQuery";
import type { Reader } from "../roles/reader";

export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What an export covers: a list's filters and order, without paging (it walks every page). */
type ExportFilter = Omit<ListFilters, "limit" | "cursor">;

/** The table's columns, in its order; times are ISO in CSV and epoch ms in JSON Lines (as the API). */
const COLUMNS = [
  "requestId",
  "workspace",
  "state",
  "previousState",
  "stateSince",
  "createdAt",
  "lastUpdatedAt",
  "attempt",
  "sessionId",
  "chatId",
  "model",
  "tokens",
  "version",
] as const;
const TIMES = new Set<string>(["stateSince", "createdAt", "lastUpdatedAt"]);

export function exportFormat(value: string): ExportFormat {
  if (!(EXPORT_FORMATS as readonly string[]).includes(value))
    throw new ReqwatchError("BAD_INPUT", `Invalid format "${value.slice(0, 40)}": use ${EXPORT_FORMATS.join(" or ")}.`);
  return value as ExportFormat;
}

/** Every request the table's URL query matches now (any page), in the table's order. */
export function exportFilterOf(query: RequestQuery, now: number, stuck: readonly StuckRequest[]): ExportFilter {
  return {
    ...toMatchFilter(
      query,
      now,
      stuck.map((row) => row.requestId),
    ),
    sort: query.sort,
    order: query.order,
  };
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

function pageText(rows: readonly RequestSummary[], format: ExportFormat): string {
  if (!rows.length) return "";
  return format === "csv" ? `${rows.map(csvLine).join("\r\n")}\r\n` : `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`;
}

/**
 * The export: every request the filter matched when it began, each once, as it was then (one
 * snapshot of the index, `tracker.listAll`). The snapshot is read a page at a time, with the event
 * loop free between pages, into a spool (a temporary file), and the spool is then handed on in
 * chunks at the consumer's pace: a slow or stalled download never holds the snapshot (which keeps
 * the index's write-ahead log from being checkpointed), and memory stays one page. A single page
 * needs no spool. The first chunk comes once the snapshot is read, so any error comes before it.
 */
/** What an export of no request is: CSV's header line, JSON Lines' nothing. */
export function exportHeader(format: ExportFormat): string {
  return format === "csv" ? `${COLUMNS.join(",")}\r\n` : "";
}

export async function* exportChunks(
  reader: Reader,
  filter: ExportFilter,
  format: ExportFormat,
  pageSize = MAX_PAGE_SIZE,
): AsyncGenerator<string | Buffer, void, undefined> {
  const header = exportHeader(format);
  const pages = reader.listAll(filter, pageSize);
  let spool: Spool | null = null;
  try {
    const first = pages.next();
    if (first.done) {
      yield header;
      return;
    }
    const second = pages.next();
    if (second.done) {
      yield header + pageText(first.value, format);
      return;
    }
    spool = openSpool();
    spool.write(header + pageText(first.value, format) + pageText(second.value, format));
    for (;;) {
      await yieldToEventLoop();
      const page = pages.next();
      if (page.done) break;
      spool.write(pageText(page.value, format));
    }
    yield* spool.chunks();
  } finally {
    pages.return();
    spool?.close();
  }
}

export const EXPORT_CONTENT_TYPE: Record<ExportFormat, string> = { csv: "text/csv; charset=utf-8", jsonl: "application/x-ndjson; charset=utf-8" };
