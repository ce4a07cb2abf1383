import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");
const clients: Client[] = [];

/** `reqwatch mcp` (and `args`) as a coding agent's client starts it: a child process spoken to over stdio. Closed by `closeAgents`. */
export async function anAgent(stateDir: string, more: Record<string, string> = {}, args: string[] = [], cwd?: string): Promise<Client> {
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", ...args], env: { ...env, ...more, REQWATCH_STATE_DIR: stateDir }, stderr: "pipe", ...(cwd && { cwd }) });
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
