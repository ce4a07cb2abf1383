import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ACTIVITY_RANGES } from "../../lib/model/activity";
import { parseActivityQuery } from "../../lib/model/requestQuery";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { telemetryActivityView } from "../../lib/views/telemetryActivityView";
import { exportsOf, feed } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";

// The overview's charts drawn from what the OpenTelemetry receiver kept: Claude Code's own captured
// exports (tests/fixtures/otlp) in the real store, read back through the store's read-only connection.
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** After the last record of the captured exports: every time below is from here, never the machine's clock. */
const RECEIVED = 1_795_713_600_000;
const open: TelemetryStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

function aStore() {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs: DAY, maxBytes: 200e6 });
  open.push(store);
  return { file, store };
}

/** The lifecycles' own times, as the store folded them: what each chart point must count. */
function lifecycles(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare("SELECT kind, state, started_at AS startedAt, processing_at AS processingAt, finished_at AS finishedAt FROM lifecycles ORDER BY seq")
      .all() as { kind: string; state: string; startedAt: number; processingAt: number | null; finishedAt: number | null }[];
  } finally {
    db.close();
  }
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe("the charts of the lifecycles received over OpenTelemetry", () => {
  it("counts Claude Code's turns: each ended in the interval it ended, the one still going on as processing from its claim, with the tokens and cost of those that ended", () => {
    const { file, store } = aStore();
    feed(store, exportsOf("plain"), RECEIVED);
    feed(store, exportsOf("tool"), RECEIVED);
    // A prompt whose API call never answered: only its log events arrive, and it goes on.
    feed(
      store,
      exportsOf("interrupted").filter((item) => item.signal === "logs"),
      RECEIVED,
    );
    const rows = lifecycles(file);
    expect(rows.map((row) => [row.kind, row.state])).toEqual([
      ["turn", "completed"],
      ["turn", "completed"],
      ["turn", "processing"],
    ]);

    const now = RECEIVED + MINUTE;
    const view = telemetryActivityView(file, "1h", null, now);
    const { pointMs } = ACTIVITY_RANGES["1h"];
    const at = (ms: number) => view.times.indexOf(Math.floor(ms / pointMs) * pointMs);
    expect(view.source).toBe("otel");
    expect(view.totals).toEqual({ completed: 2, failed: 0, "timed out": 0, released: 0, stopped: 0 });
    for (const row of rows.filter((r) => r.finishedAt !== null)) expect(view.ended.completed[at(row.finishedAt!)]).toBeGreaterThan(0);
    expect(sum(view.ended.completed)).toBe(2);
    // Each turn waited from its prompt to its first call, and ran from there to its end.
    expect(view.wait.p50.filter((value) => value !== null)).not.toHaveLength(0);
    expect(view.run.p50.filter((value) => value !== null)).not.toHaveLength(0);

    // The live turn is processing from its claim on; before anything was received, nothing was.
    const live = rows.find((row) => row.state === "processing")!;
    expect(view.states.processing.at(-1)).toBe(1);
    expect(view.states.processing[at(live.processingAt!) - 1]).toBe(0);
    expect(view.states.processing[0]).toBe(0);
    expect(view.states.created.at(-1)).toBe(0);

    // The two turns that ended used 360 in / 90 out tokens for $0.00243 (as their session's page says); the live one nothing yet.
    expect(sum(view.usage!.inputTokens)).toBe(360);
    expect(sum(view.usage!.outputTokens)).toBe(90);
    expect(sum(view.usage!.costUsd)).toBeCloseTo(0.00243, 8);
  });

  it("counts only the workspace (the service) the charts are filtered to, and an hour later the ended turns are out of range", () => {
    const { file, store } = aStore();
    feed(store, exportsOf("plain"), RECEIVED);
    expect(telemetryActivityView(file, "1h", { workspace: "claude-code" }, RECEIVED).totals.completed).toBe(1);
    expect(telemetryActivityView(file, "1h", { workspacePrefix: "claude" }, RECEIVED).totals.completed).toBe(1);
    expect(telemetryActivityView(file, "1h", { workspace: "support-bot" }, RECEIVED).totals.completed).toBe(0);
    expect(telemetryActivityView(file, "1h", null, RECEIVED + 2 * 60 * MINUTE).totals.completed).toBe(0);
    expect(telemetryActivityView(file, "24h", null, RECEIVED + 2 * 60 * MINUTE).totals.completed).toBe(1);
  });

  it("draws empty charts when nothing was received yet, and makes no store", () => {
    const file = path.join(tempParent(), "telemetry.db");
    const view = telemetryActivityView(file, "1h", null, RECEIVED);
    expect(view.totals.completed).toBe(0);
    expect(view.states.processing.every((n) => n === 0)).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("reads the charts through the store's indexes on its times, not a scan of every lifecycle", () => {
    const { file } = aStore();
    const db = new Database(file, { readonly: true });
    try {
      for (const column of ["started_at", "queued_at", "processing_at", "finished_at"]) {
        const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT count(*) FROM lifecycles WHERE ${column} >= ? AND ${column} <= ?`).all(0, 1) as { detail: string }[];
        expect(plan.map((step) => step.detail).join(" ")).toMatch(/USING (COVERING )?INDEX lifecycles_/);
      }
    } finally {
      db.close();
    }
  });

  it("a chart source other than otel is refused in words", () => {
    expect(parseActivityQuery(new URLSearchParams("source=otel")).source).toBe("otel");
    expect(parseActivityQuery(new URLSearchParams("")).source).toBeNull();
    expect(thrown(() => parseActivityQuery(new URLSearchParams("source=claude-mem")))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/^Invalid source: "claude-mem"; the charts draw/),
    });
  });
});
