import os from "node:os";
import path from "node:path";
import { ReqwatchError } from "../model/errors";
import { telemetryStoreFile } from "../telemetry/store/schema";
import { defaultClaudeMemPath } from "./claudeMem";

/**
 * A queue another program keeps, that reqwatch reads: claude-mem's database, or any SQLite job
 * table described by a mapping file (lib/sources/sqliteTable.ts); and the lifecycles the dashboard's
 * OTLP receiver made of what it was sent (`otel`: lib/telemetry, never named by a user).
 */
export type SourceSpec = (
  { kind: "claude-mem"; file: string } | { kind: "sqlite"; mapping: string } | { kind: "otel"; file: string; stuckAfterMs?: number }
) & {
  /** `?write=1`: the dashboard may act on it where the owner's own recovery does the same (lib/sources/sourceActions.ts). */
  write?: boolean;
};

/** What a spec ends with to let the dashboard act on the source. */
const WRITE_SUFFIX = "?write=1";

const USAGE = `use claude-mem (its database at ${defaultClaudeMemPath()}), claude-mem:<path to claude-mem.db>, sqlite:<mapping.json> for another SQLite job table, or otel for what the dashboard's OpenTelemetry receiver kept`;

/** What the dashboard's OpenTelemetry receiver kept: its store in `storeDir` (the user's shared folder, or beside a state folder's index). */
export function otelSpec(storeDir: string, stuckAfterMs?: number): Extract<SourceSpec, { kind: "otel" }> {
  return { kind: "otel", file: telemetryStoreFile(storeDir), ...(stuckAfterMs !== undefined && { stuckAfterMs }) };
}

/**
 * `claude-mem` (its database where claude-mem keeps it), `claude-mem:<path>` or
 * `sqlite:<mapping.json>`; a relative path is from `cwd`, and `~/` is the home folder. A trailing
 * `?write=1` lets the dashboard act on it.
 */
export function parseSourceSpec(given: string, cwd = process.cwd(), otel?: () => SourceSpec): SourceSpec {
  const write = given.endsWith(WRITE_SUFFIX);
  const text = write ? given.slice(0, -WRITE_SUFFIX.length) : given;
  if (text === "otel") {
    if (write) throw new ReqwatchError("BAD_INPUT", "otel is read only: it is what reqwatch received, shown as sent.");
    // Where a state folder is known (the CLI's, the MCP server's); the dashboard shows its own by itself.
    if (!otel)
      throw new ReqwatchError(
        "BAD_INPUT",
        "otel is not a source to name here: the dashboard shows what its OpenTelemetry receiver kept by itself (--otlp-port); `reqwatch list --source otel` and `reqwatch source otel` read it.",
      );
    return otel();
  }
  const spec = parseReadSpec(text, cwd);
  return write ? { ...spec, write } : spec;
}

function parseReadSpec(text: string, cwd: string): SourceSpec {
  const colon = text.indexOf(":");
  const kind = colon < 0 ? text : text.slice(0, colon);
  const where = colon < 0 ? "" : text.slice(colon + 1);
  if (kind !== "claude-mem" && kind !== "sqlite") throw new ReqwatchError("BAD_INPUT", `Unknown source ${JSON.stringify(text)}: ${USAGE}.`);
  const resolve = (file: string) => (file.startsWith("~/") ? path.join(os.homedir(), file.slice(2)) : path.resolve(cwd, file));
  if (kind === "sqlite") {
    if (!where) throw new ReqwatchError("BAD_INPUT", `Source ${JSON.stringify(text)} names no mapping file: use sqlite:<mapping.json>.`);
    return { kind, mapping: resolve(where) };
  }
  if (colon >= 0 && !where)
    throw new ReqwatchError(
      "BAD_INPUT",
      `Source ${JSON.stringify(text)} names no file: use claude-mem:<path to claude-mem.db>, or claude-mem alone for ${defaultClaudeMemPath()}.`,
    );
  return { kind, file: where ? resolve(where) : defaultClaudeMemPath() };
}

/** The spec as text, with its path absolute: what parses back to it from anywhere. */
export function sourceText(spec: SourceSpec): string {
  return `${spec.kind === "sqlite" ? `sqlite:${spec.mapping}` : `${spec.kind}:${spec.file}`}${spec.write ? WRITE_SUFFIX : ""}`;
}
