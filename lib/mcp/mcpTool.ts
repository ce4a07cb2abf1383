import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { filterFields } from "../model/listFilters";
import type { ConfiguredSources } from "../sources/configuredSources";
import type { TrackerService } from "../tracker";

/**
 * One MCP tool as the server registers it: its name, what an agent reads about it, its input
 * schema, and its handler. A handler returns what the agent reads (text, or a value shown as JSON)
 * or throws; the server turns a throw into a tool error.
 */
export interface McpTool<A = never> {
  name: string;
  title: string;
  description: string;
  inputSchema: z.ZodRawShape;
  annotations?: ToolAnnotations;
  // A method, so a table holds tools whose arguments differ.
  run(args: A): unknown;
}

/** What every tool works on: the tracker, and the sources this server was started with. */
export interface ToolContext {
  tracker: TrackerService;
  readable: ConfiguredSources;
}

export const requestId = filterFields.sessionId.describe("a request id");
export const ids = z.array(requestId).min(1).max(1000);
export const sourceArg = z.string().min(1).max(4096);
