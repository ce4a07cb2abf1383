import os from "node:os";
import path from "node:path";
import { ReqwatchError } from "../model/errors";
import { defaultClaudeMemPath } from "./claudeMem";

/** A queue another program keeps, that reqwatch reads: for now claude-mem's database. */
export type SourceSpec = { kind: "claude-mem"; file: string };

export const SOURCE_KINDS = ["claude-mem"] as const;

/**
 * `claude-mem` (its database where claude-mem keeps it) or `claude-mem:<path>`; a relative path is
 * from `cwd`, and `~/` is the home folder.
 */
export function parseSourceSpec(text: string, cwd = process.cwd()): SourceSpec {
  const colon = text.indexOf(":");
  const kind = colon < 0 ? text : text.slice(0, colon);
  const where = colon < 0 ? "" : text.slice(colon + 1);
  if (kind !== "claude-mem") {
    throw new ReqwatchError("BAD_INPUT", `Unknown source ${JSON.stringify(text)}: use claude-mem (its database at ${defaultClaudeMemPath()}) or claude-mem:<path to claude-mem.db>.`);
  }
  if (colon >= 0 && !where) throw new ReqwatchError("BAD_INPUT", `Source ${JSON.stringify(text)} names no file: use claude-mem:<path to claude-mem.db>, or claude-mem alone for ${defaultClaudeMemPath()}.`);
  const file = !where ? defaultClaudeMemPath() : where.startsWith("~/") ? path.join(os.homedir(), where.slice(2)) : path.resolve(cwd, where);
  return { kind, file };
}
