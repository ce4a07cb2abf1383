// `BENCH_ONLY=charts`: the overview's charts at 1,000, 100,000 and 1,000,000 lifecycles, all of them in
// the last hour (so every range counts every one of them), for the folder (the index's rollups) and
// the received telemetry (the store's rollups): the ratio of the two sizes' medians is the figure
// (target within 2x). The lifecycles are written directly in SQL, as the triggers' own tables would
// hold them: the folder's steps with the counting triggers off and counted once after (as a rebuild
// does), the store's lifecycles into a store as the release before the rollups left it, so opening
// it counts them once (that upgrade's time is given too). Beside them, the received chart counted
// from the lifecycles, as before the rollups, at 1,000,000.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");
const SIZES = [1_000, 100_000, 1_000_000];
const SAMPLES = 30;
const WORKSPACES = 5;

/** The timestamps of `count` lifecycles spread over the 50 minutes before `now`, each ending by `now`. */
const spread = (count, now) => `${now - 3_300_000} + (i * ${3_000_000 / count})`;
const series = (count) => `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})`;
const bin = (ms) => `CAST(floor(log2(${ms}) * 4) AS INTEGER)`;

/** A folder whose index holds `count` requests' steps (created, queued, claimed, completed), none of their files. */
function fillFolder(lib, openTracker, tempDir, count, now) {
  const stateDir = tempDir(`charts-${count}`);
  openTracker({ stateDir, recover: false }).close();
  const db = new Database(path.join(stateDir, "index.db"));
  db.exec(lib.DROP_COUNTING_TRIGGERS);
  const at = spread(count, now);
  const steps = [
    [0, "NULL", "'created'", "0", "NULL", "NULL", "NULL", "NULL", "NULL"],
    [1, "'created'", "'queued'", "1000", "NULL", "NULL", "NULL", "NULL", "NULL"],
    [2, "'queued'", "'processing'", "(1000 + i % 997 + 1)", "(i % 997 + 1)", bin("(i % 997 + 1)"), "NULL", "NULL", "NULL"],
    [3, "'processing'", "'completed'", "(2000 + i % 997 + i % 5003 + 1)", "NULL", "NULL", "(i % 5003 + 1)", bin("(i % 5003 + 1)"), "'completed'"],
  ];
  db.transaction(() => {
    for (const [seq, from, to, after, waitMs, waitBin, runMs, runBin, outcome] of steps)
      db.exec(`${series(count)} INSERT INTO transitions (request_id, seq, workspace, at, from_state, to_state, wait_ms, wait_bin, run_ms, run_bin, outcome)
        SELECT 'r' || i, ${seq}, 'ws' || (i % ${WORKSPACES}), CAST(${at} AS INTEGER) + ${after}, ${from}, ${to}, ${waitMs}, ${waitBin}, ${runMs}, ${runBin}, ${outcome} FROM n`);
    db.exec(lib.RECOUNT);
  })();
  db.close();
  return stateDir;
}

/** A telemetry store of `count` completed turns, as the release before the rollups left it; opened once, to count its rollups. */
function fillStore(lib, tempDir, count, now) {
  const file = path.join(tempDir(`charts-otel-${count}`), "telemetry.db");
  const options = { keepMs: 30 * 86_400_000, maxBytes: 1e12 };
  new lib.TelemetryStore(file, options).close();
  const db = new Database(file);
  for (const name of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'activity%'").pluck().all())
    db.exec(`DROP TRIGGER ${name}`);
  db.exec("DROP TABLE activity; PRAGMA user_version = 4;");
  const at = spread(count, now);
  db.exec(`${series(count)} INSERT INTO lifecycles (kind, service, state, started_at, processing_at, finished_at, first_at, last_at, received_at, last_step, calls, tools,
      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
    SELECT 'turn', 'svc' || (i % ${WORKSPACES}), 'completed', ${at} + 0.5, ${at} + i % 997 + 1.5, ${at} + i % 997 + i % 5003 + 2.5, ${at}, ${at}, CAST(${at} AS INTEGER) + 9000, '', 1, 0,
      100, 20, 0, 0, 0.001 FROM n`);
  db.close();
  const started = performance.now();
  new lib.TelemetryStore(file, options).close();
  return { file, upgradeMs: performance.now() - started };
}

export async function measureCharts({ tempDir, openTracker, openRoles, summarize, ratio, rows }) {
  const lib = require("../dist/internal.cjs");
  const ranges = Object.keys(lib.ACTIVITY_RANGES);
  const now = Date.now();
  const p50 = { folder: {}, otel: {} };
  const cleanup = [];
  try {
    for (const count of SIZES) {
      console.log(`\nwriting ${count.toLocaleString("en")} lifecycles into an index and a telemetry store...`);
      const stateDir = fillFolder(lib, openTracker, tempDir, count, now);
      cleanup.push(stateDir);
      const { file, upgradeMs } = fillStore(lib, tempDir, count, now);
      cleanup.push(path.dirname(file));
      rows.push({ name: `telemetry store's rollups counted on upgrade, ${count.toLocaleString("en")} lifecycles`, ms: Math.round(upgradeMs) });
      console.log(`  the store's upgrade counted its rollups in ${Math.round(upgradeMs)} ms`);
      const { reader, close } = openRoles({ stateDir, recover: false });
      try {
        for (const range of ranges) {
          const draw = {
            folder: () => lib.activityView(reader, range, null, now),
            otel: () => lib.telemetryActivityView(file, range, null, now),
          };
          for (const [source, chart] of Object.entries(draw)) {
            // Every lifecycle ended in the range: a chart that does not count them all is no measurement.
            const completed = chart().totals.completed;
            if (completed !== count) throw new Error(`the ${source} chart of ${range} counts ${completed} completed, not ${count}`);
            const samples = [];
            for (let i = 0; i < SAMPLES; i++) {
              const started = performance.now();
              chart();
              samples.push(performance.now() - started);
            }
            const row = summarize(`${source} chart, ${range}, ${count.toLocaleString("en")} lifecycles`, samples);
            p50[source][`${range}:${count}`] = row.p50;
          }
        }
      } finally {
        close();
      }
      if (count === SIZES.at(-1)) {
        // As the chart was read before the rollups: counted from the lifecycles (a store without them).
        const counted = path.join(path.dirname(file), "counted.db");
        fs.copyFileSync(file, counted);
        const db = new Database(counted);
        db.exec("DROP TABLE activity");
        db.close();
        const samples = [];
        for (let i = 0; i < 5; i++) {
          const started = performance.now();
          lib.telemetryActivityView(counted, "1h", null, now);
          samples.push(performance.now() - started);
        }
        summarize(`otel chart, 1h, ${count.toLocaleString("en")} lifecycles, counted from them (before the rollups)`, samples);
      }
    }
    // Against 1,000 (the target) and 100,000: a chart reads its range's rollup rows, which grow with the
    // lifecycles only until each interval's histogram bins are filled, then stay.
    const large = SIZES.at(-1);
    for (const small of SIZES.slice(0, -1))
      for (const source of ["folder", "otel"])
        for (const range of ranges)
          ratio(
            `${source} chart ${range}: ${large.toLocaleString("en")} / ${small.toLocaleString("en")} lifecycles, p50`,
            p50[source][`${range}:${large}`] / p50[source][`${range}:${small}`],
            {
              target: small === SIZES[0] ? "<= 2" : undefined,
            },
          );
  } finally {
    for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
  }
}
