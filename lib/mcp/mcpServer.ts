import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { displayJson } from "../model/displayText";
import { isReqwatchError } from "../model/errors";
import { ConfiguredSources } from "../sources/configuredSources";
import { otelSpec, type SourceSpec } from "../sources/sourceSpec";
import { telemetrySettings, telemetryStoreDir } from "../telemetry/telemetrySettings";
import type { Recording } from "../roles/recording";
import type { McpTool, ToolContext } from "./mcpTool";
import { actionTools } from "./tools/actionTools";
import { recordTools } from "./tools/recordTools";
import { requestTools } from "./tools/requestTools";
import { sessionTools } from "./tools/sessionTools";
import { sourceQueueTool } from "./tools/sourceQueueTool";

export { LineTransport } from "./stdioTransport";

function text(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: typeof value === "string" ? value : displayJson(value) }] };
}

/** A tool's failure as an MCP tool error the agent reads (the library's message), never a crash of the server. */
function failure(error: unknown): CallToolResult {
  const message = isReqwatchError(error) ? error.message : `Unexpected error: ${(error as Error)?.message ?? String(error)}`;
  return { isError: true, content: [{ type: "text", text: message }] };
}

/** Every tool, in the order an agent lists them. */
function mcpTools(context: ToolContext): McpTool[] {
  return [...requestTools(context), ...actionTools(context), sourceQueueTool(context), ...sessionTools(context), ...recordTools(context)];
}

/**
 * The MCP server over one folder (its reader, operator and the library's tracker for the session records): read tools (stuck, list, get, explain, cleanup's dry run, the
 * session's context) and write tools (retry, cancel, recording into the session). Writes go
 * through the library, so a folder reqwatch only observes refuses them with READ_ONLY, returned as
 * a tool error. Retry and cancel are the dashboard's audited bulk actions: a dry run first, then a
 * run bound to it with `confirm: true`, named `mcp` in the audit log and in each request's history.
 * `source_queue` reads only the `sources` the user started it with, and those that name no path.
 */
export function createMcpServer(
  { tracker, reader, operator }: Pick<Recording, "tracker" | "reader" | "operator">,
  version: string,
  sources: readonly SourceSpec[] = [],
): McpServer {
  const server = new McpServer({ name: "reqwatch", version });
  const readable = new ConfiguredSources(sources, () => {
    const settings = telemetrySettings();
    return otelSpec(telemetryStoreDir(settings, reader.stateDir.storeDir), settings.stuckAfterMs);
  });
  for (const { name, run, ...config } of mcpTools({ tracker, reader, operator, readable })) {
    server.registerTool(name, config, async (args: unknown) => {
      try {
        return text(await run(args as never));
      } catch (error) {
        return failure(error);
      }
    });
  }
  return server;
}
