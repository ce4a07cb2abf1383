import { defineConfig } from "rolldown";

// lib/ is bundled into CommonJS files for plain Node: the CLI (hooks call `reqwatch update` often,
// and loading a few bundled chunks instead of a few hundred modules halves its start-up) and the
// library entry (`require("reqwatch")`, and the child processes of the crash and concurrency
// tests), and the dashboard server. better-sqlite3 is native, so it stays an ordinary require; pg
// too, loaded only by openSharedTracker (its optional native binding is not bundled).
const common = { platform: "node", external: ["better-sqlite3", "pg"] };

/**
 * The library's entry, dist/index.cjs, written beside its bundle (dist/library.cjs): the Node check
 * first (bin/supported-node.cjs), then the bundle's exports by name. Node's ESM loader finds a
 * CommonJS file's exports by scanning its text for `exports.<name> =`, and in the bundle it also found
 * those of bundled CommonJS modules (`createRegExp`, undefined under `import * as`); the entry names
 * exactly the library's own.
 */
function libraryEntry() {
  return {
    name: "reqwatch-library-entry",
    generateBundle(_options, bundle) {
      const chunk = Object.values(bundle).find((item) => item.type === "chunk" && item.isEntry);
      const lines = [
        `"use strict";`,
        `// reqwatch's library entry, written by rolldown.config.mjs: the Node check, then lib/index.ts's exports.`,
        `const nodeCheck = require("../bin/supported-node.cjs");`,
        `const tooOld = nodeCheck.unsupportedNode();`,
        `if (tooOld) throw nodeCheck.unsupportedNodeError(tooOld);`,
        `const library = require("./${chunk.fileName}");`,
        ...chunk.exports.map((name) => `exports.${name} = library.${name};`),
      ];
      this.emitFile({ type: "asset", fileName: "index.cjs", source: `${lines.join("\n")}\n` });
    },
  };
}

export default defineConfig([
  // Each command is a chunk of its own (lib/cli/main.ts loads the one it runs), and so are the MCP server
  // and the OTel exporter: a command loads its own code and what it shares with the others, no more.
  {
    ...common,
    input: { cli: "lib/cli/main.ts" },
    output: { dir: "dist", entryFileNames: "[name].cjs", chunkFileNames: "cli-[name].cjs", format: "cjs", minify: true },
  },
  {
    ...common,
    input: { library: "lib/index.ts" },
    plugins: [libraryEntry()],
    output: { dir: "dist", entryFileNames: "[name].cjs", chunkFileNames: "library-[name].cjs", format: "cjs" },
  },
  // The scripts' and benches' entry (the demo, the soak, `npm run bench`): the library and the internal service; not packed.
  {
    ...common,
    input: { internal: "lib/internal.ts" },
    output: { dir: "dist", entryFileNames: "[name].cjs", chunkFileNames: "internal-[name].cjs", format: "cjs" },
  },
  // A rebuild's reader threads (lib/recovery/parallelReads.ts), and the dashboard's rebuild thread
  // (lib/recovery/backgroundRebuild.ts): every bundle here finds them beside itself.
  { ...common, input: "lib/recovery/rebuildWorker.ts", output: { file: "dist/rebuildWorker.cjs", format: "cjs" } },
  { ...common, input: "lib/recovery/rebuildThread.ts", output: { file: "dist/rebuildThread.cjs", format: "cjs" } },
  // The usage ledger's reader threads (lib/telemetry/usage/usageLedger.ts): a big first read is parsed on two.
  { ...common, input: "lib/telemetry/usage/usageReaderThread.ts", output: { file: "dist/usageReaderThread.cjs", format: "cjs" } },
  // The dashboard's OTLP receiver and its store run on a thread of their own (lib/telemetry/startTelemetry.ts).
  { ...common, input: "lib/telemetry/telemetryThread.ts", output: { file: "dist/telemetryThread.cjs", format: "cjs" } },
  // The dashboard server (`reqwatch dashboard`, `npm start`): the read API; it loads Next.js from the dashboard's folder.
  // `--otel` loads the exporter as a chunk of its own (dist/server-otelExport.cjs), so a server without it never loads OpenTelemetry.
  { ...common, input: { server: "server/main.ts" }, output: { dir: "dist", entryFileNames: "[name].cjs", chunkFileNames: "server-[name].cjs", format: "cjs" } },
]);
