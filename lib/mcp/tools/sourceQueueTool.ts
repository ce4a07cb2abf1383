import { z } from "zod";
import { sourceReport } from "../../views/sourceView";
import { sourceArg, type McpTool, type ToolContext } from "../mcpTool";

/** Another program's queue (or the received telemetry), as `reqwatch source` reports it. */
export function sourceQueueTool({ reader, readable }: ToolContext): McpTool {
  return {
    name: "source_queue",
    title: "Another program's queue: what is stuck and why",
    description:
      "Reads another program's queue, read-only, and says which messages or jobs are stuck by that program's own rules, with the counts per state: claude-mem's pending_messages in any of its schema generations (processing past its 5-minute limit, a worker pid that is gone, pending with no worker, left over in a table a newer claude-mem no longer processes; from v13.4.0 also `worker`: what its worker holds in memory now, or that it is not running), or a SQLite job table a mapping file describes (done marker, pid file, age); or otel, the lifecycles the dashboard's OpenTelemetry receiver kept for this state folder (agents' turns and runs, model calls, jobs and messages; stuck when nothing arrives for them). The same as `reqwatch source`, for the sources the user gave this server (`reqwatch mcp --source`, REQWATCH_SOURCES) and claude-mem in its default place.",
    inputSchema: {
      source: sourceArg
        .optional()
        .describe(`one of the sources this server was given, by name or as written: ${readable.list().join(", ")}; claude-mem is the default`),
      all: z.boolean().optional().describe("list every message, not only the stuck ones"),
      limit: z.number().int().min(1).max(1000).optional().describe("messages to list (default 50)"),
    },
    annotations: { readOnlyHint: true },
    run: ({ source, all, limit }: { source?: string; all?: boolean; limit?: number }) =>
      sourceReport(readable.resolve(source ?? "claude-mem"), { all, limit: limit ?? 50 }, reader.options.now()),
  };
}
