import { z } from "zod";
import { displayJson } from "../../model/displayText";
import { ReqwatchError } from "../../model/errors";
import { parseDuration } from "../../model/duration";
import { filterFields, MAX_PAGE_SIZE, type ListFilters } from "../../model/listFilters";
import { readSourceOnce } from "../../sources/liveSource";
import { explainRequest } from "../../views/explainView";
import { requestDetailView } from "../../views/requestsView";
import { explainSourceRequest } from "../../views/sourceExplainView";
import { sourceRequestView, sourceRows } from "../../views/sourceRowsView";
import { missingRequestError } from "../../views/unreadableRequest";
import { requestId, sourceArg, type McpTool, type ToolContext } from "../mcpTool";

function mustExist<T>(value: T | null, message: string): T {
  if (value === null) throw new ReqwatchError("NOT_FOUND", message);
  return value;
}

function fail(error: ReqwatchError): never {
  throw error;
}

/** The read tools over requests: what is stuck, the list, one request, its story; each also reads a source's rows. */
export function requestTools({ reader, readable }: ToolContext): McpTool[] {
  const stuck = () => reader.stuck();
  /** A row of a source this server reads, as its page shows it. */
  const sourceRow = (source: string, id: string) =>
    mustExist(
      readSourceOnce(readable.resolve(source), (live) => sourceRequestView(live, id, reader.options.now())),
      `${source} has no row ${id} (it may have been trimmed by the retention, or deleted by its owner).`,
    );
  return [
    {
      name: "stuck",
      title: "What is stuck now",
      description:
        "Requests stuck now and why, by the stuck monitor's rules: queued too long with no worker claiming, processing past a deadline, or without a heartbeat with its worker gone or unknown. Each has its reason in words. Follow with explain_request for one of them.",
      inputSchema: { workspace: filterFields.workspace.optional().describe("only this workspace") },
      annotations: { readOnlyHint: true },
      run: ({ workspace }: { workspace?: string }) => {
        const rows = stuck().filter((row) => workspace === undefined || row.workspace === workspace);
        return { count: rows.length, stuck: rows.map((row) => ({ ...row, since: new Date(row.since).toISOString() })) };
      },
    },
    {
      name: "list_requests",
      title: "List and search requests",
      description:
        "Requests, newest update first by default, filtered like the dashboard's table: states, workspace, session, words in the prompt/output/error, failed callbacks, creation window. One page at a time: pass nextCursor back as cursor for the next page.",
      inputSchema: {
        states: z.array(filterFields.state).optional().describe("any of these states"),
        workspace: filterFields.workspace.optional(),
        sessionId: filterFields.sessionId.optional(),
        text: filterFields.text.optional().describe("words that must appear in the prompt, output or error"),
        callbackFailed: z.boolean().optional().describe("only requests whose callback delivery failed"),
        createdWithin: z.string().optional().describe("created within this long before now: 15m, 24h, 7d"),
        sort: filterFields.sort.optional(),
        order: filterFields.order.optional(),
        limit: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe("rows per page (default 50)"),
        cursor: z.string().optional().describe("nextCursor of the previous page"),
        source: sourceArg
          .optional()
          .describe(
            `list another queue instead, read-only, in its id order: ${readable.list().join(", ")} (otel: the turns, model calls and messages received over OpenTelemetry)`,
          ),
      },
      annotations: { readOnlyHint: true },
      run: ({ createdWithin, source, ...filters }: ListFilters & { createdWithin?: string; source?: string }) => {
        const listed = {
          ...filters,
          ...(createdWithin !== undefined && { createdFrom: reader.options.now() - parseDuration(createdWithin, "createdWithin") }),
        };
        if (source === undefined) return reader.list(listed);
        const unfit = (["callbackFailed", "sort"] as const).filter((key) => filters[key] !== undefined);
        if (unfit.length)
          throw new ReqwatchError(
            "BAD_INPUT",
            `${unfit.join(", ")} ${unfit.length === 1 ? "is" : "are"} not for a source: it records no callbacks and lists in its id order (order sets which way); nothing was read.`,
          );
        return readSourceOnce(readable.resolve(source), (live) => sourceRows(live, listed, reader.options.now()));
      },
    },
    {
      name: "get_request",
      title: "One request",
      description:
        "One request's whole record: state, fields, claim, history. Text over 100,000 characters is cut (truncated says how long it was); `reqwatch get <id>` prints it whole. With source, a row of another queue as its page shows it: a received turn or model call (source otel, id turn-3) with its steps (model calls, tool uses, errors) and why it is stuck.",
      inputSchema: { requestId, source: sourceArg.optional().describe(`the queue the id is in, when not the state folder: ${readable.list().join(", ")}`) },
      annotations: { readOnlyHint: true },
      run: ({ requestId: id, source }: { requestId: string; source?: string }) => {
        if (source !== undefined) return sourceRow(source, id);
        const detail = requestDetailView(reader, id, stuck()) ?? fail(missingRequestError(reader, id));
        return { request: detail.request, truncated: detail.truncated, stuckReason: detail.stuckReason, actions: detail.actions };
      },
    },
    {
      name: "explain_request",
      title: "Explain one request",
      description:
        "One request's story: time in each state, its attempts (who claimed it, how each ended), deliveries dropped by the claim fence, its callback and response file, why it is stuck, its session's focus and blockers, and what to do next with the CLI command for it. With source, a row of another queue: a received turn or model call (source otel, id turn-3): time in each state, model, tokens and cost, its error, why it is stuck, and its steps.",
      inputSchema: { requestId, source: sourceArg.optional().describe(`the queue the id is in, when not the state folder: ${readable.list().join(", ")}`) },
      annotations: { readOnlyHint: true },
      run: ({ requestId: id, source }: { requestId: string; source?: string }) => {
        if (source !== undefined) {
          const explanation = explainSourceRequest(sourceRow(source, id), reader.options.now());
          return `${explanation.lines.join("\n")}\n\n${displayJson(explanation)}`;
        }
        const explanation = explainRequest(reader, id, stuck()) ?? fail(missingRequestError(reader, id));
        return `${explanation.lines.join("\n")}\n\n${displayJson(explanation)}`;
      },
    },
  ];
}
