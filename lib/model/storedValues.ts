/** Names and times as other programs' tables keep them, made what reqwatch shows and filters by: pure, shared by the sources and the telemetry store. */

/** Epoch times as job tables keep them: ms, or seconds (taken as seconds); anything else is none. */
export function epochMs(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) return undefined;
  return value < 1e11 ? value * 1000 : value;
}

/** A name reqwatch can show and filter by (a workspace, a session id): what `pattern` allows, the rest as `_`. */
export function safeName(value: unknown, pattern: RegExp, max: number): string | undefined {
  if ((typeof value !== "string" && typeof value !== "number") || value === "") return undefined;
  const name = String(value)
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, max);
  return pattern.test(name) ? name : undefined;
}

const SHOWN_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** A stored name (a session id, a service) as rows show it and pages resolve it, or null for none: what SQL's reqwatch_name gives (lib/sqlite/openSourceDb.ts). */
export function shownName(value: unknown, max: number): string | null {
  return safeName(value, SHOWN_NAME, max) ?? null;
}

/** A time as job tables keep them: epoch ms or s, or an ISO or SQLite date-time text (UTC). */
export function timeOf(value: unknown): number | undefined {
  if (typeof value !== "string" || !value) return epochMs(value);
  // Epoch seconds or ms as text (what SQLite's strftime('%s') gives).
  if (/^\d+(\.\d+)?$/.test(value)) return epochMs(Number(value));
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(value) && !/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? `${value.replace(" ", "T")}Z` : value;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}
