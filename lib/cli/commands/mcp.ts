import type { Command } from "commander";
import { sourcesFromEnv } from "../../sources/liveSource";
import type { SourceSpec } from "../../sources/sourceSpec";
import { stopIfTrackingOff, trackerFor, UsageError } from "../context";
import { source } from "../parse";

export function registerMcp(program: Command, version: string): void {
  program
    .command("mcp")
    .description("Serve the state folder to a coding agent over MCP (stdio): what is stuck, list, get, explain, retry, cancel, the session's context")
    .summary("Serve the folder to a coding agent (MCP)")
    .option(
      "--source <source>",
      "another program's queue the agent may read with source_queue: claude-mem:<path> or sqlite:<mapping.json> (repeat for several; default: $REQWATCH_SOURCES); claude-mem in its default place and otel need none",
      (value: string, previous: SourceSpec[] = []) => [...previous, source(value)],
    )
    .action(async (options: { source?: SourceSpec[] }, command: Command) => {
      stopIfTrackingOff();
      let sources = options.source;
      try {
        sources ??= sourcesFromEnv(process.env.REQWATCH_SOURCES);
      } catch (error) {
        const message = (error as Error).message;
        throw new UsageError(message.startsWith("REQWATCH_SOURCES") ? message : `REQWATCH_SOURCES: ${message}`);
      }
      const { tracker, reader, operator, upkeep, close } = trackerFor(command);
      // stdout carries the protocol: everything else goes to stderr.
      const ingest = upkeep.startIngest({ onError: (error) => console.error("reqwatch mcp: ingest failed:", error) });
      // Loaded only here: the MCP SDK would otherwise slow the start of every other command (hooks run them often).
      const { createMcpServer, LineTransport } = await import("../../mcp/mcpServer");
      const server = createMcpServer({ tracker, reader, operator }, version, sources);
      const closed = new Promise<void>((resolve) => {
        server.server.onclose = () => resolve();
      });
      await server.connect(new LineTransport());
      console.error(`reqwatch mcp: serving ${reader.stateDir.root} (${reader.ownership.access}) over stdio`);
      await closed;
      ingest.stop();
      close();
    });
}
