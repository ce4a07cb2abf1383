import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ACTIVITY_RANGES, type ActivityRange, type WorkspaceMatch } from "../../lib/model/activity";
import { countedActivityRows, telemetryActivityRows } from "../../lib/telemetry/store/queries/activity";
import { openTelemetryStore } from "../../lib/telemetry/store/readStore";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { buildActivity, type ActivityView } from "../../lib/views/activityView";
import { telemetryActivityView } from "../../lib/views/telemetryActivityView";
import { exportsOf, feed } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";

// The received lifecycles' charts read per-interval rollups kept by triggers: whatever happens to the
// lifecycles (ended in different intervals, retried, removed, received late, stamped ahead of our
// clock), every chart drawn from the rollups is the one counted from the lifecycles themselves.
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Every time below is from here, never the machine's clock. */
const NOW = 1_795_713_600_000 + 17 * MINUTE + 23_456.5;
const SERVICES = ["claude-code", "claude-desktop", "support-bot"];
const MATCHES: WorkspaceMatch[] = [null, { workspace: "claude-code" }, { workspacePrefix: "claude" }, { workspace: "nobody" }];

const open: { close(): void }[] = [];
afterEach(() => {
  for (const handle of open.splice(0)) handle.close();
});

function aStore(keepMs = 30 * DAY) {
  const file = path.join(tempParent(), "telemetry.db");
  const store = new TelemetryStore(file, { keepMs, maxBytes: 2e9 });
  // A second writer's connection: the triggers keep the rollups whichever connection writes.
  const db = new Database(file);
  open.push(store, db);
  return { file, store, db };
}

/** A small deterministic generator, so a failure shows the same lifecycles again. */
function numbers(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

interface Shape {
  service: string;
  state: string;
  started: number;
  queued: number | null;
  processing: number | null;
  finished: number | null;
  received: number;
  cost: number;
  tokens: [input: number, output: number, cacheRead: number, cacheWrite: number];
}

/** A lifecycle somewhere in the week before `NOW`: created only, queued, processing, or ended one of several ways. */
function aLifecycle(next: () => number, within = 7 * DAY): Shape {
  const started = NOW - next() * within;
  const queued = next() < 0.5 ? started + next() * 5 * MINUTE : null;
  const progress = next();
  const processing = progress < 0.15 ? null : (queued ?? started) + next() * 20 * MINUTE;
  const finished = progress < 0.3 ? null : (processing ?? queued ?? started) + next() * 2 * HOUR;
  const state =
    finished !== null
      ? ["completed", "failed", "timed out", "stopped"][Math.floor(next() * 4)]!
      : processing !== null
        ? "processing"
        : queued !== null
          ? "queued"
          : "created";
  return {
    service: SERVICES[Math.floor(next() * SERVICES.length)]!,
    state,
    started,
    queued,
    processing,
    finished,
    received: Math.floor(finished ?? processing ?? queued ?? started),
    cost: finished === null ? 0 : Math.round(next() * 1e5) / 1e6,
    tokens: finished === null ? [0, 0, 0, 0] : [Math.floor(next() * 900), Math.floor(next() * 300), Math.floor(next() * 50), Math.floor(next() * 20)],
  };
}

function insert(db: Database.Database, shape: Shape): number {
  return Number(
    db
      .prepare(
        `INSERT INTO lifecycles (kind, service, state, started_at, queued_at, processing_at, finished_at, first_at, last_at, received_at, last_step, calls, tools,
           input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd) VALUES ('turn', ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 1, 0, ?, ?, ?, ?, ?)`,
      )
      .run(
        shape.service,
        shape.state,
        shape.started,
        shape.queued,
        shape.processing,
        shape.finished,
        shape.started,
        shape.received,
        shape.received,
        ...shape.tokens,
        shape.cost,
      ).lastInsertRowid,
  );
}

/** Every chart of every range and filter, drawn at `nows`, from the rollups and counted from the lifecycles. */
function chartsBothWays(file: string, nows: readonly number[]): { rolledUp: ActivityView[]; counted: ActivityView[] } {
  const reader = openTelemetryStore(file);
  open.push(reader);
  const rolledUp: ActivityView[] = [];
  const counted: ActivityView[] = [];
  for (const now of nows)
    for (const range of Object.keys(ACTIVITY_RANGES) as ActivityRange[])
      for (const match of MATCHES) {
        rolledUp.push(telemetryActivityView(file, range, match, now));
        counted.push(
          buildActivity(range, now, "otel", (window) => ({
            rows: countedActivityRows(reader, { ...window, match }),
            live: telemetryActivityRows(reader, { ...window, match }).live,
          })),
        );
      }
  return { rolledUp, counted };
}

function expectSameCharts(file: string, nows: readonly number[] = [NOW, NOW + 2 * HOUR, NOW - 3 * DAY]) {
  const { rolledUp, counted } = chartsBothWays(file, nows);
  expect(rolledUp).toEqual(counted);
  // Not a match of two empty sets of charts.
  expect(counted.some((view) => view.totals.completed > 0 && view.wait.p50.some((p) => p !== null))).toBe(true);
}

describe("the received lifecycles' chart rollups", () => {
  it("add up to the count of the lifecycles: Claude Code's real turns, and a week of lifecycles ended in different intervals, ways and services", () => {
    const { file, store, db } = aStore();
    feed(store, exportsOf("plain"), NOW - 10 * MINUTE);
    feed(store, exportsOf("tool"), NOW - 10 * MINUTE);
    const next = numbers(7);
    db.transaction(() => {
      for (let i = 0; i < 600; i++) insert(db, aLifecycle(next));
    })();
    expectSameCharts(file);
  });

  it("follow a lifecycle folded anew: queued, claimed, retried and ended later, in another interval", () => {
    const { file, db } = aStore();
    const next = numbers(11);
    const seqs = db.transaction(() =>
      Array.from({ length: 300 }, () =>
        insert(db, { ...aLifecycle(next, DAY), state: "created", queued: null, processing: null, finished: null, cost: 0, tokens: [0, 0, 0, 0] }),
      ),
    )();
    const fold = db.prepare(
      "UPDATE lifecycles SET state = ?, queued_at = ?, processing_at = ?, finished_at = ?, attempt = ?, cost_usd = ?, input_tokens = ?, output_tokens = ?, last_at = ? WHERE seq = ?",
    );
    const row = db.prepare("SELECT started_at AS started FROM lifecycles WHERE seq = ?");
    for (const seq of seqs) {
      const { started } = row.get(seq) as { started: number };
      const queued = started + next() * 3 * MINUTE;
      fold.run("queued", queued, null, null, null, 0, 0, 0, queued, seq);
      const claimed = queued + next() * 10 * MINUTE;
      fold.run("processing", queued, claimed, null, 1, 0, 0, 0, claimed, seq);
      // Retried: a second claim after the first attempt, then its end, hours on.
      const retried = claimed + next() * 3 * HOUR;
      fold.run("processing", queued, retried, null, 2, 0, 0, 0, retried, seq);
      if (next() < 0.7) fold.run(next() < 0.5 ? "completed" : "failed", queued, retried, retried + next() * HOUR, 2, 0.0125, 400, 90, retried, seq);
      // A fold that changes nothing the charts count leaves the rollups as they are.
      db.prepare("UPDATE lifecycles SET calls = calls + 1, last_at = last_at + 1 WHERE seq = ?").run(seq);
    }
    expectSameCharts(file);
  });

  it("follow lifecycles removed (by the store's retention and by hand), received late, and stamped ahead of our clock", () => {
    const { file, store, db } = aStore(2 * DAY);
    const next = numbers(23);
    db.transaction(() => {
      for (let i = 0; i < 500; i++) insert(db, aLifecycle(next));
      // Received today, though they began days ago (an agent's file read late).
      for (let i = 0; i < 100; i++) insert(db, { ...aLifecycle(next, 6 * DAY), received: Math.floor(NOW) });
      // An agent's clock 20 s ahead of ours: in the interval running now, after now.
      for (let i = 0; i < 10; i++) insert(db, { ...aLifecycle(next, 0), finished: NOW + 20_000, state: "completed" });
    })();
    expectSameCharts(file);
    const before = db.prepare("SELECT count(*) FROM lifecycles").pluck().get() as number;
    while (store.trim(NOW, 1000).more);
    db.prepare("DELETE FROM lifecycles WHERE seq % 7 = 0").run();
    expect(db.prepare("SELECT count(*) FROM lifecycles").pluck().get()).toBeLessThan(before / 2);
    expectSameCharts(file);
    // Removing every lifecycle leaves no rollup rows behind but sums of dollars' rounding crumbs.
    db.prepare("DELETE FROM lifecycles").run();
    expect(db.prepare("SELECT count(*) FROM activity WHERE metric != 'cost'").pluck().get()).toBe(0);
  });

  it("are counted once for a store an earlier release made, when the receiver opens it, and kept from then on", () => {
    const file = path.join(tempParent(), "telemetry.db");
    const next = numbers(31);
    // The store as the release before the rollups left it: its lifecycles, no rollups, its schema's version 4.
    new TelemetryStore(file, { keepMs: 30 * DAY, maxBytes: 2e9 }).close();
    const earlier = new Database(file);
    for (const name of earlier.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'activity%'").pluck().all())
      earlier.exec(`DROP TRIGGER ${name as string}`);
    earlier.exec("DROP TABLE activity; PRAGMA user_version = 4;");
    earlier.transaction(() => {
      for (let i = 0; i < 400; i++) insert(earlier, aLifecycle(next));
    })();
    earlier.close();
    // Read before the receiver opened it: counted from the lifecycles.
    const unopened = chartsBothWays(file, [NOW]);
    expect(unopened.rolledUp).toEqual(unopened.counted);

    const store = new TelemetryStore(file, { keepMs: 30 * DAY, maxBytes: 2e9 });
    const db = new Database(file);
    open.push(store, db);
    expect(db.pragma("user_version", { simple: true })).toBe(5);
    expect(db.prepare("SELECT count(*) FROM activity").pluck().get()).toBeGreaterThan(0);
    expectSameCharts(file);
    db.transaction(() => {
      for (let i = 0; i < 100; i++) insert(db, aLifecycle(next));
    })();
    expectSameCharts(file);
  });

  it("answer a chart from a range of the rollup, not the lifecycles", () => {
    const { db } = aStore();
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT bucket, metric, bin, sum(n) FROM activity WHERE span = ? AND bucket >= ? AND bucket <= ? GROUP BY bucket, metric, bin",
      )
      .all(60_000, 0, 1) as { detail: string }[];
    expect(plan.map((step) => step.detail).join(" ")).toMatch(/SEARCH activity USING PRIMARY KEY \(span=\? AND bucket>\? AND bucket<\?\)/);
  });
});
