import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { filterFields } from "../model/listFilters";
import type { ConfiguredSources } from "../sources/configuredSources";
import type { Operator } from "../roles/operator";
import type { Reader } from "../roles/reader";
import type { Tracker } from "../types";

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

/** What the tools work on: the folder's reader and operator, the library's tracker (to record into a session), and the sources this server was started with. */
export interface ToolContext {
  tracker: Tracker;
  reader: Reader;
  operator: Operator;
  readable: ConfiguredSources;
}

export const requestId = filterFields.sessionId.describe("a request id");
export const ids = z.array(requestId).min(1).max(1000);
export const sourceArg = z.string().min(1).max(4096);
