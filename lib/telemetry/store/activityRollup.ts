import { BINS_PER_OCTAVE, ROLLUP_SPANS_MS } from "../../model/activity";

/**
 * The received lifecycles' steps counted per interval, service, metric and histogram bin, one rollup
 * per width in ROLLUP_SPANS_MS, as the index's `activity` counts the folder's (lib/db/ddl.ts): a
 * chart reads a few thousand rows of it, never the lifecycles. Kept by triggers on `lifecycles` in
 * the statement that inserts, folds or removes one, so it always counts the rows the store holds.
 * Metrics: state:<state> (lifecycles in less lifecycles out), end:<state>, wait and run (durations,
 * by bin), cost, tokens:in and tokens:out (what those that ended used); all but wait and run have bin 0.
 */
export const ACTIVITY_ROLLUP_TABLE = `
CREATE TABLE IF NOT EXISTS activity (
  span INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  service TEXT NOT NULL,
  metric TEXT NOT NULL,
  bin INTEGER NOT NULL,
  -- A count, or for cost a sum of dollars.
  n NOT NULL,
  PRIMARY KEY (span, bucket, service, metric, bin)
) WITHOUT ROWID;`;

/** A duration's histogram bin, as durationBin (lib/model/activity.ts) computes it. */
export const binOf = (ms: string) => `CASE WHEN ${ms} < 1 THEN -1 ELSE CAST(floor(log2(${ms}) * ${BINS_PER_OCTAVE}) AS INTEGER) END`;

/** The state a lifecycle `r` was in just before one of its times: the last of its earlier steps. */
export const stateBefore = (r: string) => ({
  processing: `CASE WHEN ${r}.queued_at IS NOT NULL THEN 'queued' ELSE 'created' END`,
  finished: `CASE WHEN ${r}.processing_at IS NOT NULL THEN 'processing' WHEN ${r}.queued_at IS NOT NULL THEN 'queued' ELSE 'created' END`,
});

interface Step {
  name: "started" | "queued" | "claimed" | "ended";
  /** The columns its rows are computed from: an update that changes none leaves its rows as they are. */
  columns: readonly string[];
  at: string;
  /** Whether the lifecycle took this step. */
  taken: string;
  /** [metric, bin, how much it adds, when it applies]. */
  rows: readonly [metric: string, bin: string, n: string, when: string][];
}

/** What each step of lifecycle `r` adds to the rollups: its start, its queueing, its claim, its end. */
function stepsOf(r: string): Step[] {
  const before = stateBefore(r);
  return [
    { name: "started", columns: ["started_at"], at: `${r}.started_at`, taken: "1", rows: [["'state:created'", "0", "1", "1"]] },
    {
      name: "queued",
      columns: ["queued_at"],
      at: `${r}.queued_at`,
      taken: `${r}.queued_at IS NOT NULL`,
      rows: [
        ["'state:queued'", "0", "1", "1"],
        ["'state:created'", "0", "-1", "1"],
      ],
    },
    {
      name: "claimed",
      columns: ["processing_at", "queued_at", "started_at"],
      at: `${r}.processing_at`,
      taken: `${r}.processing_at IS NOT NULL`,
      rows: [
        ["'wait'", binOf(`${r}.processing_at - coalesce(${r}.queued_at, ${r}.started_at)`), "1", "1"],
        ["'state:processing'", "0", "1", "1"],
        [`'state:' || ${before.processing}`, "0", "-1", "1"],
      ],
    },
    {
      name: "ended",
      columns: ["finished_at", "state", "processing_at", "queued_at", "cost_usd", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"],
      at: `${r}.finished_at`,
      taken: `${r}.finished_at IS NOT NULL`,
      rows: [
        [`'end:' || ${r}.state`, "0", "1", "1"],
        ["'run'", binOf(`${r}.finished_at - ${r}.processing_at`), "1", `${r}.processing_at IS NOT NULL`],
        [`'state:' || ${before.finished}`, "0", "-1", "1"],
        ["'cost'", "0", `${r}.cost_usd`, "1"],
        ["'tokens:in'", "0", `${r}.input_tokens + ${r}.cache_read_tokens + ${r}.cache_write_tokens`, "1"],
        ["'tokens:out'", "0", `${r}.output_tokens`, "1"],
      ],
    },
  ];
}

const bucketOf = (at: string, span: number) => `CAST(${at} / ${span} AS INTEGER)`;

/** The rows of step `step` of `r` as a SELECT of (metric, bin, n), those adding nothing left out. */
function stepRows(step: Step, sign: 1 | -1): string {
  const rows = step.rows.map(([metric, bin, n, when]) => `SELECT ${metric} AS metric, ${bin} AS bin, ${sign < 0 ? `-(${n})` : n} AS n WHERE ${when}`);
  return `SELECT * FROM (${rows.join(" UNION ALL ")}) WHERE n != 0`;
}

/** The rollups' widths as a table `spans (span)`: one statement adds a step to all of them. */
const SPANS = `(${ROLLUP_SPANS_MS.map((span) => `SELECT ${span} AS span`).join(" UNION ALL ")}) AS spans`;

/** Add (or take away) step `step` of `r` in every rollup, when `changed` holds. */
function applyStep(r: string, step: Step, sign: 1 | -1, changed: string): string[] {
  const add = `  INSERT INTO activity (span, bucket, service, metric, bin, n)
    SELECT spans.span, CAST(${step.at} / spans.span AS INTEGER), ${r}.service, metric, bin, n FROM ${SPANS}, (${stepRows(step, sign)}) WHERE ${step.taken} AND ${changed}
    ON CONFLICT (span, bucket, service, metric, bin) DO UPDATE SET n = n + excluded.n;`;
  if (sign > 0) return [add];
  // Rows brought to nothing go, so the rollups shrink with the store (a sum of dollars may keep a crumb).
  const prune = ROLLUP_SPANS_MS.map(
    (span) =>
      `  DELETE FROM activity WHERE span = ${span} AND bucket = ${bucketOf(step.at, span)} AND service = ${r}.service AND n = 0 AND ${step.taken} AND ${changed};`,
  );
  return [add, ...prune];
}

const changedSql = (step: Step) => `(${["service", ...step.columns].map((column) => `OLD.${column} IS NOT NEW.${column}`).join(" OR ")})`;

/**
 * The triggers that keep the rollups: a lifecycle added, folded anew, removed. A fold rewrites every
 * column of its lifecycle (its tokens with each call): one trigger a step, which fires only when that
 * step was or is taken and a column it is computed from changed, takes its old rows out and its new
 * ones in; a fold that moves no step runs none.
 */
export const ACTIVITY_ROLLUP_TRIGGERS = `
CREATE TRIGGER IF NOT EXISTS activity_insert AFTER INSERT ON lifecycles BEGIN
${stepsOf("NEW")
  .flatMap((step) => applyStep("NEW", step, 1, "1"))
  .join("\n")}
END;
${stepsOf("NEW")
  .map((step, i) => {
    const old = stepsOf("OLD")[i]!;
    return `CREATE TRIGGER IF NOT EXISTS activity_${step.name} AFTER UPDATE OF ${["service", ...step.columns].join(", ")} ON lifecycles
WHEN (${old.taken} OR ${step.taken}) AND ${changedSql(step)} BEGIN
${[...applyStep("OLD", old, -1, "1"), ...applyStep("NEW", step, 1, "1")].join("\n")}
END;`;
  })
  .join("\n")}
CREATE TRIGGER IF NOT EXISTS activity_delete AFTER DELETE ON lifecycles BEGIN
${stepsOf("OLD")
  .flatMap((step) => applyStep("OLD", step, -1, "1"))
  .join("\n")}
END;`;

/**
 * The rollups counted afresh from the lifecycles: a store made before them gets them once, on its
 * upgrade. The finest from the lifecycles, each coarser one from the finest (far fewer rows).
 */
const [FINEST_SPAN, ...COARSER_SPANS] = ROLLUP_SPANS_MS;
export const FILL_ACTIVITY_ROLLUP = `
DELETE FROM activity;
INSERT INTO activity (span, bucket, service, metric, bin, n)
  SELECT ${FINEST_SPAN}, bucket, service, metric, bin, sum(n) FROM (
${stepsOf("l")
  .flatMap((step) =>
    step.rows.map(
      ([metric, bin, n, when]) =>
        `    SELECT ${bucketOf(step.at, FINEST_SPAN)} AS bucket, l.service AS service, ${metric} AS metric, ${bin} AS bin, ${n} AS n FROM lifecycles l WHERE ${step.taken} AND ${when} AND ${n} != 0`,
    ),
  )
  .join("\n    UNION ALL\n")}
  ) GROUP BY bucket, service, metric, bin HAVING sum(n) != 0;
${COARSER_SPANS.map(
  (span) => `INSERT INTO activity (span, bucket, service, metric, bin, n)
  SELECT ${span}, bucket * ${FINEST_SPAN} / ${span} AS coarse, service, metric, bin, sum(n) FROM activity WHERE span = ${FINEST_SPAN}
  GROUP BY coarse, service, metric, bin HAVING sum(n) != 0;`,
).join("\n")}`;
