// `BENCH_ONLY=mcp`: a coding agent's tool calls to `reqwatch mcp` over stdio, on a state folder of
// 100,000 requests (the process's start and its first reconciliation are left out, as the target says).
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const CALLS = 200;

export async function measureMcp({ ROOT, writeFiles, tempDir, openTracker, summarize }) {
  const stateDir = tempDir("mcp");
  console.log("\nwriting 100,000 request files for the MCP server...");
  writeFiles(stateDir, 100_000);
  // The index is built once here, as a folder in use already has it.
  openTracker({ stateDir, recover: false }).close();

  const env = { ...process.env, REQWATCH_STATE_DIR: stateDir };
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(ROOT, "bin/reqwatch.js"), "mcp"], env, stderr: "ignore" });
  const client = new Client({ name: "bench-agent", version: "1.0.0" });
  await client.connect(transport);
  try {
    const call = async (name, args) => {
      const started = performance.now();
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
      return performance.now() - started;
    };
    // The first call waits for the server's start-up reconciliation of the folder.
    await call("stuck", {});
    const id = (i) => `r${String((i * 7919) % 100_000).padStart(7, "0")}`;
    const tools = [
      ["stuck", () => ({})],
      ["list_requests", (i) => ({ states: ["failed"], workspace: `ws${i % 20}`, limit: 50 })],
      ["get_request", (i) => ({ requestId: id(i) })],
      ["explain_request", (i) => ({ requestId: id(i) })],
    ];
    for (const [name, argsFor] of tools) {
      const samples = [];
      for (let i = 0; i < CALLS; i++) samples.push(await call(name, argsFor(i)));
      summarize(`MCP ${name} over stdio (100k)`, samples, { target: "p95 <= 50 ms" });
    }
  } finally {
    await client.close();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}
