import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import type { TimelineItem } from "../../lib/views/timelineView";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");
const clients: Client[] = [];

/** `reqwatch mcp` (and `args`) as a coding agent's client starts it: a child process spoken to over stdio. Closed by `closeAgents`. */
export async function anAgent(stateDir: string, more: Record<string, string> = {}, args: string[] = [], cwd?: string): Promise<Client> {
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", ...args],
    env: { ...env, ...more, REQWATCH_STATE_DIR: stateDir },
    stderr: "pipe",
    ...(cwd && { cwd }),
  });
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** One tool call, its text parts joined. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string }> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return { isError: result.isError === true, text: content.map((part) => part.text).join("\n") };
}

export async function closeAgents(): Promise<void> {
  await Promise.all(clients.splice(0).map((client) => client.close()));
}

/** A read tool's answer, or the test fails with the agent's error. */
async function answer(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(client, name, args);
  if (result.isError) throw new Error(`${name} answered an error: ${result.text}`);
  return result.text;
}

/**
 * What a coding agent asks of the telemetry the dashboard received (source `otel`): its rows
 * (`list_requests`), one lifecycle whole as its page shows it (`get_request`), its story in words
 * (`explain_request`), a session's context (`session_context`).
 */
export const receivedOverMcp = {
  rows: async (client: Client, filters: Record<string, unknown> = {}) =>
    JSON.parse(await answer(client, "list_requests", { source: "otel", ...filters })) as RequestsView,
  lifecycle: async (client: Client, requestId: string) => JSON.parse(await answer(client, "get_request", { source: "otel", requestId })) as SourceRequestView,
  /** Its story's lines (the answer's words, before the same as JSON). */
  story: async (client: Client, requestId: string) => (await answer(client, "explain_request", { source: "otel", requestId })).split("\n\n{")[0]!,
  session: (client: Client, sessionId: string) => answer(client, "session_context", { source: "otel", sessionId }),
};

/**
 * An item's title on a timeline as the pages write it whatever the machine's pace: `head` (a RegExp
 * source), its time (`instant`, `37 ms`, `1.1 s`), `tail` (what follows the time), and `, the slowest`
 * when it was: on a busy machine a tool can take longer than the mock's model call.
 */
export function timelineTitle(head: string, tail = ""): RegExp {
  return new RegExp(`^\\s*${head}, (?:instant|\\d+(?:\\.\\d+)? m?s)${tail}(?:, the slowest)?$`);
}

/** A lifecycle's timeline as an agent reads it: each item's name, indented by how deep it is nested. */
export function timelineOutline(view: SourceRequestView): string[] {
  const walk = (items: readonly TimelineItem[], depth: number): string[] =>
    items.flatMap((item) => [`${"  ".repeat(depth)}${item.title}`, ...walk(item.children, depth + 1)]);
  return walk(view.timeline?.items ?? [], 0);
}

/** A lifecycle's facts as an agent reads them: `Attempts: 3`. */
export function factsOf(view: SourceRequestView): Record<string, string> {
  return Object.fromEntries((view.facts ?? []).map((fact) => [fact.label, fact.value]));
}
