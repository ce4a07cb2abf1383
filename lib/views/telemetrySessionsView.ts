import { escapeControls } from "../model/displayText";
import { formatDuration } from "../model/duration";
import { resolveListFilters } from "../model/listFilters";
import { formatCost } from "../model/money";
import { plural } from "../model/plural";
import { telemetrySessionFigures } from "./sessionFigures";
import { receivedSessionState, type SessionState } from "../sessions/sessionState";
import type { SourceDb } from "../sqlite/openSourceDb";
import type { SourceMessage } from "../sources/sourceMessage";
import { LIVE, readPage, type Row } from "../sources/sourceQueue";
import { otelSpec } from "../sources/sourceSpec";
import { telemetryQueue } from "../sources/telemetryQueue";
import { CLAUDE_CODE_SERVICE } from "../telemetry/dialects/claudeCode";
import { CODEX_SERVICE } from "../telemetry/dialects/codexCli";
import { GEMINI_CLI_SERVICE } from "../telemetry/dialects/geminiCli";
import { telemetrySettings, telemetryStoreDir, type TelemetrySettings } from "../telemetry/telemetrySettings";
import type { UsageSums } from "../telemetry/store/queries/callSums";
import {
  liveLifecycles,
  sessionByModel,
  sessionErrors,
  sessionSums,
  sessionSumsByStoredId,
  sessionToldBy,
  sessionTools,
  shownSessionIds,
  type SessionSums,
} from "../telemetry/store/queries/sessions";
import { readTelemetryStore } from "../telemetry/store/readStore";
import type { Reader } from "../roles/reader";

/** A session received over OpenTelemetry (Claude Code's `session.id`, a GenAI conversation id), as the sessions list shows it. */
export interface TelemetrySessionRow extends UsageSums {
  source: "otel";
  sessionId: string;
  /** Where it comes from, as a person names it: Claude Code for its turns (with its service, when renamed), else the service that sent it. */
  from: string;
  service: string;
  state: SessionState;
  firstSeen: number;
  lastSeen: number;
  /** Its lifecycles (turns, model calls, messages): the rows the requests table shows for it. */
  requests: number;
  turns: number;
  tools: number;
  /** Lifecycles still going on, and of those, the stuck (by the `otel` source's own rule). */
  live: number;
  stuck: number;
}

/** A received session's page: its figures, cost and tokens per model, tools, errors, and its newest lifecycles. */
export interface TelemetrySessionView {
  session: TelemetrySessionRow;
  byModel: (UsageSums & { model: string })[];
  tools: { name: string; uses: number; failed: number; durationMs: number }[];
  /** The lifecycles that failed or carry an error now, newest first. */
  errors: { requestId: string; state: string; at: number; error: string }[];
  /** Why each stuck one is stuck, newest first. */
  stuck: { requestId: string; reason: string }[];
  /** Its newest lifecycles, as the requests table lists them (`/requests?source=otel&session=<id>` pages through all). */
  requests: SourceMessage[];
  /** How many more it has than `requests` lists. */
  more: number;
  /** Where its lifecycles came from: received over OpenTelemetry, read from the agent's own files, or both. */
  toldBy: { received: boolean; files: boolean };
}

/** The sessions list holds the most recently active of the received ones: a GenAI call without a conversation id is a session of its own trace. */
const TELEMETRY_SESSIONS_LISTED = 500;
const LISTED_REQUESTS = 50;
const LISTED_ERRORS = 50;

/**
 * The sessions in what the dashboard's OpenTelemetry receiver kept for a state folder
 * (`telemetry.db`, read through lib/telemetry/store/queries/sessions.ts): a read model beside the tracker, read-only
 * through the `otel` source's own connection and expressions, so a session's id, rows and stuck
 * ones are those the requests table and the stuck badge show. A store not made yet holds none.
 */
/** The agents whose turns a session's rows name, by the service name each gives itself. */
const CLIENTS: Record<string, string> = { [CLAUDE_CODE_SERVICE]: "Claude Code", [GEMINI_CLI_SERVICE]: "Gemini CLI", [CODEX_SERVICE]: "Codex CLI" };

export class TelemetrySessions {
  readonly #queue;
  readonly #stuckAfterMs: number;

  constructor(
    readonly file: string,
    stuckAfterMs: number,
  ) {
    this.#stuckAfterMs = stuckAfterMs;
    this.#queue = telemetryQueue(file, stuckAfterMs);
  }

  /** Most recently active first, at most `limit`. */
  list(now: number, limit = TELEMETRY_SESSIONS_LISTED): TelemetrySessionRow[] {
    return this.#reading([], (db) => {
      // Grouped by the stored id (its index), then by the id a row shows: ids that show alike are one session, as the table's filter has them.
      const grouped = sessionSumsByStoredId(db);
      const byName = new Map<string, SessionSums>();
      const nameOf = shownSessionIds(db);
      for (const { raw, ...sums } of grouped) {
        const name = nameOf(raw);
        if (name === null) continue;
        const before = byName.get(name);
        byName.set(name, before ? addSums(before, sums) : sums);
      }
      const live = this.#liveBySession(db, now);
      return [...byName]
        .map(([sessionId, sums]) => this.#rowOf(sessionId, sums, live.get(sessionId) ?? [], now))
        .sort((a, b) => b.lastSeen - a.lastSeen || a.sessionId.localeCompare(b.sessionId))
        .slice(0, limit);
    });
  }

  /** One session's page, or null when no lifecycle carries its id. BAD_INPUT for an id no session can have. */
  get(sessionId: string, now: number): TelemetrySessionView | null {
    const filters = resolveListFilters({ sessionId, limit: LISTED_REQUESTS });
    return this.#reading(null, (db) => {
      const sums = sessionSums(db, sessionId);
      if (!sums.requests) return null;
      const live = this.#liveRows(db, now, sessionId);
      const byModel = sessionByModel(db, sessionId);
      const tools = sessionTools(db, sessionId);
      const errors = sessionErrors(db, sessionId, LISTED_ERRORS).map((row) => ({
        requestId: this.#queue.requestId(row),
        state: String(row.state),
        at: Number(row.at),
        error: String(row.error ?? "failed"),
      }));
      const page = readPage(db, this.#queue, "otel", filters, now, null);
      return {
        session: this.#rowOf(sessionId, sums, live, now),
        byModel,
        tools: tools.map((tool) => ({ ...tool, failed: tool.failed ?? 0, durationMs: Math.round(tool.durationMs) })),
        errors,
        stuck: live.flatMap((row) => {
          const reason = this.#queue.stuck(row, now, null);
          return reason ? [{ requestId: this.#queue.requestId(row), reason: reason() }] : [];
        }),
        requests: page.items,
        more: Math.max(0, sums.requests - page.items.length),
        toldBy: sessionToldBy(db, sessionId),
      };
    });
  }

  #rowOf(sessionId: string, sums: SessionSums, live: readonly Row[], now: number): TelemetrySessionRow {
    const stuck = live.filter((row) => this.#queue.stuck(row, now, null) !== null).length;
    return {
      source: "otel",
      sessionId,
      from: sums.turns === 0 ? sums.service : (CLIENTS[sums.service] ?? `Claude Code (service ${sums.service})`),
      ...sums,
      costUsd: Math.round(sums.costUsd * 1e6) / 1e6,
      state: receivedSessionState(live.length - stuck),
      live: live.length,
      stuck,
    };
  }

  /** The lifecycles still going on (few, by the state index), with what the stuck rule reads, newest first. */
  #liveRows(db: SourceDb, now: number, sessionId?: string): Row[] {
    return liveLifecycles(db, LIVE, sessionId);
  }

  #liveBySession(db: SourceDb, now: number): Map<string, Row[]> {
    const bySession = new Map<string, Row[]>();
    for (const row of this.#liveRows(db, now)) {
      if (typeof row._session !== "string") continue;
      bySession.set(row._session, [...(bySession.get(row._session) ?? []), row]);
    }
    return bySession;
  }

  /** Read the store; one that does not exist yet (nothing received) holds no session. */
  #reading<T>(empty: T, read: (db: SourceDb) => T): T {
    return readTelemetryStore(this.file, empty, read);
  }
}

function addSums(a: SessionSums, b: SessionSums): SessionSums {
  const add = (key: keyof SessionSums) => (a[key] as number) + (b[key] as number);
  return {
    requests: add("requests"),
    turns: add("turns"),
    calls: add("calls"),
    tools: add("tools"),
    inputTokens: add("inputTokens"),
    outputTokens: add("outputTokens"),
    cacheReadTokens: add("cacheReadTokens"),
    cacheWriteTokens: add("cacheWriteTokens"),
    costUsd: add("costUsd"),
    estimatedCalls: add("estimatedCalls"),
    unpricedCalls: add("unpricedCalls"),
    firstSeen: Math.min(a.firstSeen, b.firstSeen),
    lastSeen: Math.max(a.lastSeen, b.lastSeen),
    service: a.service <= b.service ? a.service : b.service,
  };
}

/** The received sessions of the tracker's state folder, as the CLI and the MCP server read them (the dashboard keeps its own, beside its receiver). */
export function telemetrySessionsOf(reader: Reader, settings: Pick<TelemetrySettings, "dir" | "stuckAfterMs"> = telemetrySettings()): TelemetrySessions {
  return new TelemetrySessions(otelSpec(telemetryStoreDir(settings, reader.stateDir.storeDir)).file, settings.stuckAfterMs);
}

/** Where a session came from, in words: `received over OpenTelemetry from Claude Code`, `read from Claude Code's own files`, or both. */
function toldBy({ received, files }: TelemetrySessionView["toldBy"], from: string): string {
  return files && received
    ? `received over OpenTelemetry from ${from} and read from its own files`
    : files
      ? `read from ${from}'s own files`
      : `received over OpenTelemetry from ${from}`;
}

/** A received session in plain words: what `reqwatch session show --source otel` prints and the MCP tool says. Each stored text stays on its line. */
export function telemetrySessionLines(view: TelemetrySessionView, now: number): string[] {
  const { session } = view;
  const lines = [
    `Session ${session.sessionId} (${session.state}, ${toldBy(view.toldBy, escapeControls(session.from))}; started ${formatDuration(Math.max(0, now - session.firstSeen))} ago, last activity ${formatDuration(Math.max(0, now - session.lastSeen))} ago)`,
    telemetrySessionFigures(session),
  ];
  if (view.byModel.length) {
    lines.push(
      `By model (${view.byModel.length}):`,
      ...view.byModel.map(
        (m) =>
          `  - ${escapeControls(m.model)}: ${plural(m.calls, "call")}, ${m.inputTokens.toLocaleString("en-US")} in / ${m.outputTokens.toLocaleString("en-US")} out tokens, ${formatCost(m)}`,
      ),
    );
  }
  if (view.tools.length)
    lines.push(
      `Tools (${view.tools.length}): ${view.tools.map((t) => `${escapeControls(t.name)} (${t.uses}${t.failed ? `, ${t.failed} failed` : ""})`).join(", ")}`,
    );
  if (view.stuck.length) lines.push(`Stuck (${view.stuck.length}):`, ...view.stuck.map((s) => `  - ${s.requestId}: ${escapeControls(s.reason)}`));
  if (view.errors.length)
    lines.push(`Errors (${view.errors.length}):`, ...view.errors.map((e) => `  - ${e.requestId} (${e.state}): ${escapeControls(e.error)}`));
  lines.push(
    `Newest ${view.requests.length === 1 ? "request" : `${view.requests.length} requests`}${view.more ? ` (${view.more} more: reqwatch list --source otel --session ${session.sessionId})` : ""}:`,
    ...view.requests.map(
      (m) =>
        `  - ${m.request.requestId} ${m.request.state}${m.note ? `: ${escapeControls(m.note)}` : ""}${m.stuck ? ` (stuck: ${escapeControls(m.stuck)})` : ""}`,
    ),
  );
  return lines;
}
