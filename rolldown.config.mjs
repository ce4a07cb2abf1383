import { defineConfig } from "rolldown";

// lib/ is bundled into single CommonJS files for plain Node: the CLI (hooks call `reqwatch update`
// often, and loading one file instead of a few hundred modules halves its start-up) and the
// library entry (`require("reqwatch")`, and the child processes of the crash and concurrency
// tests), and the dashboard server. better-sqlite3 is native, so it stays an ordinary require.
const common = { platform: "node", external: ["better-sqlite3"] };

export default defineConfig([
  // `reqwatch mcp` loads the MCP server as a chunk of its own, so the other commands never load its SDK.
  { ...common, input: { cli: "lib/cli/main.ts" }, output: { dir: "dist", entryFileNames: "[name].cjs", chunkFileNames: "cli-[name].cjs", format: "cjs", minify: true } },
  { ...common, input: "lib/index.ts", output: { file: "dist/index.cjs", format: "cjs" } },
  // A rebuild's reader threads (lib/recovery/parallelReads.ts), and the dashboard's rebuild thread
  // (lib/recovery/backgroundRebuild.ts): every bundle here finds them beside itself.
  { ...common, input: "lib/recovery/rebuildWorker.ts", output: { file: "dist/rebuildWorker.cjs", format: "cjs" } },
  { ...common, input: "lib/recovery/rebuildThread.ts", output: { file: "dist/rebuildThread.cjs", format: "cjs" } },
  // The dashboard server (`reqwatch dashboard`, `npm start`): the read API; it loads Next.js from the dashboard's folder.
  // `--otel` loads the exporter as a chunk of its own (dist/server-otelExport.cjs), so a server without it never loads OpenTelemetry.
  { ...common, input: { server: "server/main.ts" }, output: { dir: "dist", entryFileNames: "[name].cjs", chunkFileNames: "server-[name].cjs", format: "cjs" } },
]);
