import { PRICE_TABLE, type CallCosts } from "../../model/money";
import { SLOT_MS, type LedgerStatus, type SlotRow } from "./usageLedger";
import type { UsageAgent } from "./usageLines";

/**
 * The usage report (`reqwatch usage`, the Usage page): the ledger's calls summed by day, month,
 * session, project or model, each row per agent, days and months in a time zone (the machine's by
 * default, as ccusage's). Pure: the ledger's rows in, the report out.
 */

export const USAGE_BY = ["day", "month", "session", "project", "model"] as const;
export type UsageBy = (typeof USAGE_BY)[number];

export interface UsageQuery {
  by: UsageBy;
  /** An IANA time zone. */
  timezone: string;
  /** Local dates, `YYYY-MM-DD`, both included. */
  since?: string;
  until?: string;
}

export interface UsageSumsRow extends CallCosts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Every token counted: the four above and what is billed as output beyond them (Gemini's thoughts). */
  totalTokens: number;
  lastAt: number;
  /** The models used (a call whose agent named none is under none). */
  modelsUsed: string[];
}

/** A row of the report, its fields named as ccusage's JSON names them where it has them (`period`, `modelsUsed`). */
interface UsageRow extends UsageSumsRow {
  /** The day (`YYYY-MM-DD`), month (`YYYY-MM`), session, project or model. */
  period: string;
  /** A session's project. */
  project?: string;
  agentsUsed: UsageAgent[];
  /** Its figures per agent, and per model (null: not said). */
  agents: (UsageSumsRow & { agent: UsageAgent })[];
  models: (UsageSumsRow & { model: string | null })[];
}

export interface UsageReport {
  by: UsageBy;
  timezone: string;
  since: string | null;
  until: string | null;
  agents: UsageAgent[];
  /** Where a cost not written by the agent comes from. */
  priceTable: typeof PRICE_TABLE;
  rows: UsageRow[];
  totals: UsageSumsRow;
  read: LedgerStatus;
}

/** The time zone's name as given (Asia/Kolkata stays so, not Intl's Asia/Calcutta), or null when Intl knows no such zone. */
export function knownTimeZone(name: string): string | null {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name.trim() });
    return name.trim() || null;
  } catch {
    return null;
  }
}

export const machineTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

const empty = (): UsageSumsRow => ({
  calls: 0,
  costUsd: 0,
  estimatedCalls: 0,
  unpricedCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: 0,
  lastAt: 0,
  modelsUsed: [],
});

function add(into: UsageSumsRow, row: SlotRow): void {
  into.calls += row.calls;
  into.costUsd += row.costUsd;
  into.estimatedCalls += row.estimatedCalls;
  into.unpricedCalls += row.unpricedCalls;
  into.inputTokens += row.input;
  into.outputTokens += row.output;
  into.cacheReadTokens += row.cacheRead;
  into.cacheWriteTokens += row.cacheWrite;
  into.totalTokens += row.input + row.output + row.cacheRead + row.cacheWrite + row.extra;
  into.lastAt = Math.max(into.lastAt, row.lastAt);
  if (row.model !== null && !into.modelsUsed.includes(row.model)) into.modelsUsed.push(row.model);
}

export function usageReport(slots: readonly SlotRow[], query: UsageQuery, agents: UsageAgent[], read: LedgerStatus): UsageReport {
  const format = new Intl.DateTimeFormat("en-CA", { timeZone: query.timezone, year: "numeric", month: "2-digit", day: "2-digit" });
  const days = new Map<number, string>();
  const dayOf = (slot: number) => {
    let day = days.get(slot);
    if (day === undefined) days.set(slot, (day = format.format(slot * SLOT_MS)));
    return day;
  };
  const rows = new Map<string, UsageRow>();
  const totals = empty();
  for (const slot of slots) {
    const day = dayOf(slot.slot);
    if ((query.since && day < query.since) || (query.until && day > query.until)) continue;
    const key = query.by === "day" ? day : query.by === "month" ? day.slice(0, 7) : query.by === "model" ? (slot.model ?? "(not said)") : slot.grp;
    let row = rows.get(key);
    if (!row)
      rows.set(key, (row = { period: key, ...empty(), agentsUsed: [], agents: [], models: [], ...(query.by === "session" && { project: slot.project }) }));
    add(row, slot);
    add(totals, slot);
    let agent = row.agents.find((entry) => entry.agent === slot.agent);
    if (!agent) row.agents.push((agent = { agent: slot.agent, ...empty() }));
    add(agent, slot);
    let model = row.models.find((entry) => entry.model === slot.model);
    if (!model) row.models.push((model = { model: slot.model, ...empty() }));
    add(model, slot);
    if (!row.agentsUsed.includes(slot.agent)) row.agentsUsed.push(slot.agent);
  }
  const ordered = [...rows.values()];
  for (const row of ordered) {
    row.modelsUsed.sort();
    row.agentsUsed.sort();
    row.agents.sort((a, b) => a.agent.localeCompare(b.agent));
    row.models.sort((a, b) => b.costUsd - a.costUsd || String(a.model).localeCompare(String(b.model)));
  }
  // Days and months in order; sessions the latest first; projects and models the costliest first.
  if (query.by === "day" || query.by === "month") ordered.sort((a, b) => a.period.localeCompare(b.period));
  else if (query.by === "session") ordered.sort((a, b) => b.lastAt - a.lastAt);
  else ordered.sort((a, b) => b.costUsd - a.costUsd || a.period.localeCompare(b.period));
  totals.modelsUsed.sort();
  return {
    by: query.by,
    timezone: query.timezone,
    since: query.since ?? null,
    until: query.until ?? null,
    agents,
    priceTable: PRICE_TABLE,
    rows: ordered,
    totals,
    read,
  };
}
