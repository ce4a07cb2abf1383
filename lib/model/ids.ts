import { ReqwatchError } from "./errors";

/** Ids become file names, so anything outside these patterns is refused before it touches a path. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const WORKSPACE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** `<id>.json` → the id; temp files (hidden), other names and invalid ids → null. */
export function idOfFileName(name: string): string | null {
  if (!name.endsWith(".json") || name.startsWith(".")) return null;
  const id = name.slice(0, -".json".length);
  return REQUEST_ID_PATTERN.test(id) ? id : null;
}

function describe(value: unknown): string {
  if (typeof value !== "string") return `a ${value === null ? "null" : typeof value}`;
  if (value.length === 0) return "an empty string";
  if (value.length > 80) return `${value.length} characters`;
  return JSON.stringify(value);
}

export function assertRequestId(value: unknown, what = "request id"): asserts value is string {
  if (typeof value !== "string" || !REQUEST_ID_PATTERN.test(value)) {
    throw new ReqwatchError("BAD_INPUT", `Invalid ${what}: ${describe(value)}. Use 1 to 128 letters, digits, "_" or "-".`);
  }
}

export function assertWorkspace(value: unknown): asserts value is string {
  if (typeof value !== "string" || !WORKSPACE_PATTERN.test(value)) {
    throw new ReqwatchError("BAD_INPUT", `Invalid workspace: ${describe(value)}. Use 1 to 64 letters, digits, "_" or "-".`);
  }
}
