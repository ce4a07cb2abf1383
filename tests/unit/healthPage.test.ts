import { describe, expect, it } from "vitest";
import type { TelemetryStatus } from "../../lib/telemetry/startTelemetry";
import { healthPage, type Field, type Part } from "../../lib/views/healthPage";
import type { HealthView } from "../../lib/views/healthView";

// The Health page's words, computed without Next.js from the figures the runtime gives it.
const T0 = 1_800_000_000_000;
const THRESHOLDS = { queuedStuckAfterMs: 5 * 60_000, heartbeatTimeoutMs: 30_000, processingStuckAfterMs: 30 * 60_000 };

/** A managed folder the server just opened: nothing ingested, no monitor pass yet, retention on. */
function aFreshFolder(): HealthView & { telemetry: TelemetryStatus | null } {
  return {
    stateDir: "/home/u/.reqwatch",
    access: "managed",
    accessReason: "reqwatch writes its requests",
    generation: "g1",
    requests: 12_345,
    indexBytes: 3 * 1024 * 1024,
    requestFileBytes: 1500,
    archiveBytes: 0,
    retention: {
      active: true,
      inactiveReason: null,
      retentionMs: 7 * 86_400_000,
      archiveRetentionMs: null,
      intervalMs: 3_600_000,
      latest: null,
      lastRemoval: null,
    },
    unreadable: [],
    ingest: {
      mode: "watching",
      watcherError: null,
      watcherIngested: 0,
      lastReconcile: null,
      reconcileFixes: 0,
      lastIngestLagMs: null,
      responses: { ipcDir: null, mode: "off", ready: false, error: null, ingested: 0 },
    },
    responses: { files: 0, unreadable: 0, callbackFailed: 0 },
    guard: { problem: null, since: null, rebuilds: 0, lastRebuild: null },
    monitor: { intervalMs: 5000, lastPassAt: null, durationMs: null, stuck: null, lastError: null },
    telemetry: null,
  };
}

/** What the dashboard received: a store set aside twice, Claude Code's files read, Codex's off, one model's usage. */
function aReceivingDashboard(): TelemetryStatus {
  return {
    receiver: { url: "http://127.0.0.1:4318", error: null },
    receivedBy: { pid: 4242, thisDashboard: true },
    file: "/home/u/.reqwatch/telemetry.db",
    bytes: 2048,
    keepMs: 7 * 86_400_000,
    setAside: ["telemetry.db.damaged-2", "telemetry.db.damaged-1"],
    intake: [{ signal: "traces", exports: 3, records: 1200, rejected: 0, lastAt: T0 }],
    unmapped: { rows: [], total: 0, offset: 0, limit: 50, known: [] },
    usage: {
      byDayAndModel: [
        {
          day: "2027-01-15",
          model: "claude-sonnet",
          calls: 2,
          costUsd: 0.5,
          estimatedCalls: 0,
          unpricedCalls: 0,
          inputTokens: 12_000,
          outputTokens: 300,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
      ],
      bySession: [],
    },
    claudeDir: "/home/u/.claude",
    codexDir: null,
    geminiDir: "/home/u/.gemini",
    agentFiles: [{ agent: "claude-code", files: 3, lines: 1500, malformed: 2, oversized: 0, lastReadAt: T0 }],
  };
}

const field = (fields: Field[], term: string) => fields.find((f) => f.term === term)?.value;
const words = (parts: Part[] | undefined) =>
  parts?.map((part) => (typeof part === "string" ? part : "at" in part ? `<${part.at}>` : "code" in part ? `\`${part.code}\`` : "<stuck>")).join("");

describe("the Health page's view", () => {
  it("a fresh managed folder: its sizes, a watcher that saw nothing yet, a monitor not yet passed, the retention's words", () => {
    const page = healthPage(aFreshFolder(), THRESHOLDS);
    expect(page.refreshMs).toBe(5000);
    expect(page.guardNotice).toBeNull();
    expect(words(field(page.folder, "Requests indexed"))).toBe("12,345");
    expect(words(field(page.folder, "Request files"))).toBe("2 KB");
    expect(words(field(page.folder, "Index size"))).toBe("3.0 MB");
    expect(words(field(page.folder, "Archive size"))).toBe("0 KB (cleaned-up requests and the audit log)");
    expect(words(field(page.folder, "Index rebuilds"))).toBe("none while running");
    expect(words(field(page.watcher, "Files another program wrote"))).toMatch(/^none since this server started/);
    expect(words(field(page.watcher, "Response files"))).toBe("no ipc folder (this server reads none)");
    expect(words(field(page.monitor, "Last pass"))).toBe("not yet");
    expect(words(field(page.monitor, "Stuck"))).toBe("—");
    expect(words(field(page.monitor, "Thresholds"))).toBe(
      "queued stuck after 5m (REQWATCH_QUEUED_STUCK_AFTER), claimed stuck after 30s without a heartbeat (REQWATCH_HEARTBEAT_TIMEOUT), processing stuck after 30m with no worker holding it (REQWATCH_PROCESSING_STUCK_AFTER)",
    );
    expect(page.retention.map((f) => [f.term, words(f.value)])).toEqual([
      ["Requests", "finished ones archived and removed 7d after their last update, every 1h"],
      ["Archive", "kept forever (REQWATCH_ARCHIVE_RETENTION=off)"],
      ["Last run", "not yet"],
    ]);
    expect(page.telemetry).toBeNull();
  });

  it("a missing state directory: read every second, the notice says since when; a pass made, the stuck count is the live one", () => {
    const health = aFreshFolder();
    health.guard = {
      problem: "The state directory is missing.",
      since: T0,
      rebuilds: 1,
      lastRebuild: { at: T0, cause: "the index was deleted", durationMs: 40 },
    };
    health.monitor = { ...health.monitor, lastPassAt: T0, durationMs: 1.25 };
    health.access = "observed";
    health.retention = { ...health.retention, active: false, inactiveReason: "the folder is observed, read-only: reqwatch removes nothing there" };
    const page = healthPage(health, THRESHOLDS);
    expect(page.refreshMs).toBe(1000);
    expect(words(page.guardNotice!)).toBe(`The state directory is missing. The tables show the requests as they were <${T0}>.`);
    expect(words(field(page.folder, "Index rebuilds"))).toBe(`1 while running; latest <${T0}>, because the index was deleted (40 ms)`);
    expect(words(field(page.folder, "Archive size"))).toBe("none: nothing is archived from an observed folder");
    expect(words(field(page.monitor, "Last pass"))).toBe(`<${T0}> (1.3 ms)`);
    expect(words(field(page.monitor, "Stuck"))).toBe("<stuck>");
    expect(page.retention.map((f) => [f.term, words(f.value)])).toEqual([
      ["Requests", "off: the folder is observed, read-only: reqwatch removes nothing there"],
    ]);
  });

  it("received telemetry: the store set aside named as code, each agent's files read, off or none yet, and usage as the tables show it", () => {
    const page = healthPage({ ...aFreshFolder(), telemetry: aReceivingDashboard() }, THRESHOLDS);
    const received = page.telemetry!;
    expect(words(received.setAsideNotice!)).toBe(
      "The telemetry store was found damaged and set aside as `telemetry.db.damaged-2` (and 1 earlier); a new one was started. What was received before is in that copy: delete it once you no longer need it.",
    );
    expect(received.fields.map((f) => [f.term, words(f.value)])).toEqual([
      ["Receiver", "OTLP/HTTP on http://127.0.0.1:4318 (/v1/traces, /v1/logs, /v1/metrics)"],
      ["Received by", "this dashboard (pid 4242)"],
      ["Claude Code's files", `3 files in /home/u/.claude, 1,500 lines read, 2 malformed skipped, the last <${T0}>`],
      ["Codex CLI's files", "not read (REQWATCH_AGENT_FILES=off)"],
      ["Gemini CLI's files", "none yet in /home/u/.gemini"],
      ["Store", "/home/u/.reqwatch/telemetry.db (2 KB; kept 7d)"],
      ["traces", `1,200 records in 3 exports, the last <${T0}>`],
    ]);
    expect(received.byDayAndModel).toEqual([
      { day: "2027-01-15", model: "claude-sonnet", counts: ["2", "12,000", "300", "0", "0"], cost: "$0.50", costNote: "Cost as the clients said." },
    ]);
  });
});
