import type fs from "node:fs";
import { readRegularFile, type RegularFileOptions } from "./readRegularFile";

/**
 * A small JSON file read, parsed and checked, or why not, in words that follow the file's name
 * ("x.json is not JSON (line 2, column 5)"); `reason` says which kind of problem, for callers that
 * treat them apart.
 */
type SmallJsonRead<T> =
  | { value: T; stat: fs.Stats }
  | { missing: true }
  | { problem: string; reason: "link" | "not regular" | "too big" | "unreadable" | "empty" | "not json" | "wrong shape"; stat: fs.Stats | null };

interface SmallJsonOptions<T> extends RegularFileOptions {
  /** The value the file must hold, or undefined when it holds anything else. Default: any JSON. */
  shape?: (value: unknown) => T | undefined;
}

/**
 * The one way reqwatch reads a small JSON file (a marker, a holder, a position, a mapping): only a
 * regular file within `maxBytes` (readRegularFile), a leading byte-order mark dropped, parsed, and
 * checked by `shape`. Never throws for what the file holds.
 */
export function readSmallJson<T = unknown>(file: string, options: SmallJsonOptions<T>): SmallJsonRead<T> {
  const read = readRegularFile(file, options);
  if (!("text" in read)) return read;
  const text = read.text.replace(/^\uFEFF/, "");
  if (text.trim() === "") return { problem: "is empty", reason: "empty", stat: read.stat };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problem: `is not JSON${jsonErrorAt(error, text)}`, reason: "not json", stat: read.stat };
  }
  const value = options.shape ? options.shape(json) : (json as T);
  return value === undefined ? { problem: "does not hold what it should", reason: "wrong shape", stat: read.stat } : { value, stat: read.stat };
}

/** The file's value, or null when it is missing or holds anything else: for files whose absence and damage mean the same (a holder gone, no position yet). */
export function smallJsonValue<T>(file: string, options: SmallJsonOptions<T>): T | null {
  const read = readSmallJson(file, options);
  return "value" in read ? read.value : null;
}

/** Where JSON.parse stopped, as a line and column, never the text there (the engine's message quotes it). */
function jsonErrorAt(error: unknown, text: string): string {
  const position = /at position (\d+)/.exec((error as Error).message)?.[1];
  if (position === undefined) return "";
  const before = text.slice(0, Number(position)).split("\n");
  return ` (line ${before.length}, column ${before.at(-1)!.length + 1})`;
}

/** A plain JSON object (not an array, not null), for a `shape` to look into. */
export function jsonObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
