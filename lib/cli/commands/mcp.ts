import type { Command } from "commander";
import { stopIfTrackingOff, trackerFor } from "../context";

export function registerMcp(program: Command, version: string): void {
  program
    .command("mcp")
    .description("Serve the state folder to a coding agent over MCP (stdio): what is stuck, list, get, explain, retry, cancel, the session's context")
    .summary("Serve the folder to a coding agent (MCP)")
    .action(async (_options, command: Command) => {
      stopIfTrackingOff();
      const tracker = trackerFor(command);
      // stdout carries the protocol: everything else goes to stderr.
      const ingest = tracker.startIngest({ onError: (error) => console.error("reqwatch mcp: ingest failed:", error) });
      // Loaded only here: the MCP SDK would otherwise slow the start of every other command (hooks run them often).
      const { createMcpServer, LineTransport } = await import("../../mcp/mcpServer");
      const server = createMcpServer(tracker, version);
      const closed = new Promise<void>((resolve) => {
        server.server.onclose = () => resolve();
      });
      await server.connect(new LineTransport());
      console.error(`reqwatch mcp: serving ${tracker.stateDir.root} (${tracker.ownership.access}) over stdio`);
      await closed;
      ingest.stop();
      tracker.close();
    });
}
