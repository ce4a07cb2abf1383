import { LIVE_STATES, ROLLUP_SPANS_MS } from "../model/activity";
import { STATES } from "../model/states";

/**
 * The index is derived data: when this version changes, the index is dropped and rebuilt from the
 * files instead of migrated.
 */
export const INDEX_SCHEMA_VERSION = 17;

export const INDEX_DDL = `
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS requests (
  id TEXT NOT NULL UNIQUE,
  workspace TEXT NOT NULL,
  session_id TEXT,
  -- No type: a chat id is a string or a number in the file, and a list keeps which.
  chat_id,
  state TEXT NOT NULL,
  previous_state TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  state_since INTEGER NOT NULL,
  processing_started_at INTEGER,
  attempt INTEGER,
  model TEXT,
  tokens INTEGER,
  version INTEGER NOT NULL,
  max_attempts INTEGER,
  -- The work queue: when a queued request may be claimed, its deadline, and who holds its claim.
  not_before INTEGER,
  timeout_at INTEGER,
  claim_token TEXT,
  claim_pid INTEGER,
  claim_host TEXT,
  claim_process_started_at INTEGER,
  -- When a reqwatch worker last claimed this request (its history's latest claim): which workspaces are being worked.
  last_claimed_at INTEGER,
  -- The request's own callback delivery: 1 delivered, 0 failed, NULL none recorded (the table's "callback failed").
  callback_success INTEGER,
  -- Last sign of life of a processing request: its claim's latest heartbeat (beats are liveness, not
  -- history, and are kept here only; see lib/queue/deliver.ts), else when it entered processing.
  heartbeat_at INTEGER,
  -- A claimer's short reservation of a queued request while it writes the claim outside the lock
  -- (lib/queue/claimNext.ts); cleared by any write of the request.
  reserved_until INTEGER,
  reserved_by INTEGER,
  file_mtime_ms REAL NOT NULL,
  file_size INTEGER NOT NULL,
  file_ino INTEGER NOT NULL,
  -- A signature of prompt, output and error (lib/db/requestText.ts): the text index is rewritten only when it changes.
  text_sig TEXT,
  doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_by_updated ON requests (updated_at, id);
CREATE INDEX IF NOT EXISTS requests_by_created ON requests (created_at, id);
CREATE INDEX IF NOT EXISTS requests_by_state ON requests (state, updated_at, id);
CREATE INDEX IF NOT EXISTS requests_by_workspace ON requests (workspace, updated_at, id);
CREATE INDEX IF NOT EXISTS requests_by_workspace_created ON requests (workspace, created_at, id);
CREATE INDEX IF NOT EXISTS requests_by_state_since ON requests (state, state_since, id);
-- Each workspace's queue in order: a claim while some workspaces are paused takes the oldest of each of the others.
CREATE INDEX IF NOT EXISTS requests_queued_by_workspace ON requests (workspace, state_since, id) WHERE state = 'queued';
-- The stuck monitor's range scans, over processing requests only.
CREATE INDEX IF NOT EXISTS requests_silent ON requests (heartbeat_at) WHERE state = 'processing';
CREATE INDEX IF NOT EXISTS requests_deadline ON requests (timeout_at) WHERE state = 'processing' AND timeout_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS requests_by_session ON requests (session_id, updated_at, id) WHERE session_id IS NOT NULL;
-- A workspace's latest claim, for the reason a queued request is stuck.
CREATE INDEX IF NOT EXISTS requests_last_claim ON requests (workspace, last_claimed_at) WHERE last_claimed_at IS NOT NULL;

-- Each reqwatch claim in a request's history (lib/model/attempts.ts), with the worker process that
-- made it and how it ended: the workers page. Rewritten with the request on every write.
CREATE TABLE IF NOT EXISTS attempts (
  request_id TEXT NOT NULL,
  number INTEGER NOT NULL,
  workspace TEXT NOT NULL,
  worker_name TEXT,
  pid INTEGER,
  host TEXT,
  process_started_at INTEGER,
  claimed_at INTEGER NOT NULL,
  ended_at INTEGER,
  -- How it ended (lib/model/attempts.ts: completed, failed, released, timed out, stopped); NULL while it runs.
  outcome TEXT,
  PRIMARY KEY (request_id, number)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS attempts_by_worker ON attempts (host, pid, process_started_at, claimed_at);

-- Every step of every request's lifecycle (lib/model/activity.ts): what the charts count. A write
-- appends its request's new steps (lib/db/transitionRows.ts).
CREATE TABLE IF NOT EXISTS transitions (
  request_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  workspace TEXT NOT NULL,
  at INTEGER NOT NULL,
  from_state TEXT,
  to_state TEXT NOT NULL,
  wait_ms INTEGER,
  wait_bin INTEGER,
  run_ms INTEGER,
  run_bin INTEGER,
  outcome TEXT,
  PRIMARY KEY (request_id, seq)
) WITHOUT ROWID;

-- The steps counted per interval, workspace and metric, one rollup per width in ROLLUP_SPANS_MS,
-- kept by the triggers below: a chart reads a few thousand of these rows, never the steps.
-- Metrics: state:<state> for the live states (requests in less requests out), end:<outcome> (how
-- attempts ended), wait and run (durations, by histogram bin; the other metrics have bin 0).
CREATE TABLE IF NOT EXISTS activity (
  span INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  workspace TEXT NOT NULL,
  metric TEXT NOT NULL,
  bin INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (span, bucket, workspace, metric, bin)
) WITHOUT ROWID;

-- How many requests are in each state, kept by the triggers of STATE_COUNT_TRIGGERS_DDL below.
CREATE TABLE IF NOT EXISTS state_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO state_counts (state, n) VALUES ${STATES.map((state) => `('${state}', 0)`).join(", ")};

-- Text search over prompt, output and error (the first TEXT_INDEXED_CHARS of each), by requests.rowid.
-- Contentless: the text lives in doc already; words match by prefix (unicode61, diacritics folded).
CREATE VIRTUAL TABLE IF NOT EXISTS requests_text USING fts5(prompt, output, error, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');

-- Sessions (sessions/<id>.json), for the sessions list and "which session is current".
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  created_at INTEGER,
  updated_at INTEGER,
  ended_at INTEGER,
  active_task TEXT,
  commands INTEGER NOT NULL,
  files INTEGER NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions (updated_at, id);

-- The change feed: one row per index change, in commit order across every process (our writers
-- update the index in the same transaction as the file). Trimmed to the newest FEED_RETAINED rows.
-- Not AUTOINCREMENT (its sqlite_sequence row was one more page in the log per write): a trim never
-- deletes the newest row, so the next seq is always past every seq given before.
CREATE TABLE IF NOT EXISTS changes (
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  request_id TEXT NOT NULL,
  -- For an upsert, the request's summary (a list row), so a table can update without a refetch.
  data TEXT,
  at INTEGER NOT NULL
);

-- A gateway's response files (<data>/ipc/<workspace>/responses/<id>.json, lib/responses): their
-- callback delivery, for the table's "callback failed"; the request page reads the file itself.
CREATE TABLE IF NOT EXISTS responses (
  request_id TEXT NOT NULL,
  workspace TEXT NOT NULL,
  callback_success INTEGER,
  -- Why the file cannot be read, or NULL.
  problem TEXT,
  file_mtime_ms REAL,
  file_size INTEGER,
  file_ino INTEGER,
  PRIMARY KEY (request_id, workspace)
) WITHOUT ROWID;

-- The bulk actions' dry runs (lib/db/dryRuns.ts), until they expire: a confirmation from any process
-- on the folder acts on what its dry run matched. Not derived from the files: a rebuild loses them.
CREATE TABLE IF NOT EXISTS dry_runs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  -- The arguments it was asked with, in one form (lib/actions/dryRunStore.ts): a confirmation must ask the same.
  asked TEXT NOT NULL,
  summary TEXT NOT NULL,
  target TEXT NOT NULL,
  ids TEXT NOT NULL,
  cutoff INTEGER,
  expires_at INTEGER NOT NULL
);

-- Files that exist but could not be read. An indexed request keeps its last good row meanwhile.
CREATE TABLE IF NOT EXISTS unreadable_files (
  file TEXT PRIMARY KEY,
  reason TEXT NOT NULL,
  since INTEGER NOT NULL,
  file_mtime_ms REAL,
  file_size INTEGER,
  file_ino INTEGER
);
`;

/**
 * The counts per state, kept by triggers in the statement that changes the row, so the header's
 * counts (polled, and sent with every feed batch) are one small read, not a scan of every request.
 * A rebuild drops them while it fills the index (a trigger per inserted row would slow it), then
 * counts once and puts them back (lib/recovery/recover.ts). A row's state is always one of STATES.
 */
const STATE_COUNT_TRIGGERS: Readonly<Record<string, string>> = {
  state_counts_insert: `AFTER INSERT ON requests BEGIN
  UPDATE state_counts SET n = n + 1 WHERE state = NEW.state;
END`,
  state_counts_delete: `AFTER DELETE ON requests BEGIN
  UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
END`,
  state_counts_update: `AFTER UPDATE OF state ON requests WHEN OLD.state IS NOT NEW.state BEGIN
  UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
  UPDATE state_counts SET n = n + 1 WHERE state = NEW.state;
END`,
};

/** LIVE_STATES as an SQL list, for `IN (...)`. */
export const LIVE_STATES_SQL = LIVE_STATES.map((state) => `'${state}'`).join(", ");

/**
 * A step's rows in the activity rollups, from a row of `transitions` named `row`: [metric, bin,
 * how much it adds, when it applies]. A live state's row counts requests in minus requests out.
 */
const ACTIVITY_METRICS = (row: string): [metric: string, bin: string, delta: number, when: string][] => [
  [`'state:' || ${row}.to_state`, "0", 1, `${row}.to_state IN (${LIVE_STATES_SQL})`],
  [`'state:' || ${row}.from_state`, "0", -1, `${row}.from_state IN (${LIVE_STATES_SQL})`],
  [`'end:' || ${row}.outcome`, "0", 1, `${row}.outcome IS NOT NULL`],
  ["'wait'", `${row}.wait_bin`, 1, `${row}.wait_bin IS NOT NULL`],
  ["'run'", `${row}.run_bin`, 1, `${row}.run_bin IS NOT NULL`],
];

/**
 * The activity rollups, kept in the statement that adds or removes a step. A removal (a cleanup, a
 * rewritten history) deletes the rows it brings to zero, so the rollups shrink with the folder.
 */
const ACTIVITY_TRIGGERS: Readonly<Record<string, string>> = Object.fromEntries(
  (
    [
      ["activity_insert", "INSERT", "NEW", 1],
      ["activity_delete", "DELETE", "OLD", -1],
    ] as const
  ).map(([name, event, row, sign]) => [
    name,
    `AFTER ${event} ON transitions BEGIN
${ROLLUP_SPANS_MS.flatMap((span) =>
  ACTIVITY_METRICS(row).map(([metric, bin, delta, when]) => {
    const key = `span = ${span} AND bucket = ${row}.at / ${span} AND workspace = ${row}.workspace AND metric = ${metric} AND bin = ${bin}`;
    const add = `  INSERT INTO activity (span, bucket, workspace, metric, bin, n) SELECT ${span}, ${row}.at / ${span}, ${row}.workspace, ${metric}, ${bin}, ${sign * delta} WHERE ${when}
    ON CONFLICT (span, bucket, workspace, metric, bin) DO UPDATE SET n = n + excluded.n;`;
    return sign < 0 ? `${add}\n  DELETE FROM activity WHERE ${when} AND ${key} AND n = 0;` : add;
  }),
).join("\n")}
END`,
  ]),
);

/**
 * The rollups counted afresh: the finest from the steps, each coarser one from the finest (fewer
 * rows than the steps). Rows that add up to nothing are left out.
 */
const [FINEST_SPAN, ...COARSER_SPANS] = ROLLUP_SPANS_MS;
const REFILL_ACTIVITY = `DELETE FROM activity;
INSERT INTO activity (span, bucket, workspace, metric, bin, n)
  SELECT ${FINEST_SPAN}, at / ${FINEST_SPAN} AS bucket, workspace, metric, bin, sum(delta) AS n FROM (
${ACTIVITY_METRICS("t")
  .map(([metric, bin, delta, when]) => `    SELECT at, workspace, ${metric} AS metric, ${bin} AS bin, ${delta} AS delta FROM transitions t WHERE ${when}`)
  .join("\n    UNION ALL\n")}
  ) GROUP BY bucket, workspace, metric, bin HAVING n != 0;
${COARSER_SPANS.map(
  (span) => `INSERT INTO activity (span, bucket, workspace, metric, bin, n)
  SELECT ${span}, bucket * ${FINEST_SPAN} / ${span} AS coarse, workspace, metric, bin, sum(n) FROM activity WHERE span = ${FINEST_SPAN}
  GROUP BY coarse, workspace, metric, bin HAVING sum(n) != 0;`,
).join("\n")}`;

/** Every trigger that keeps a count: a rebuild drops them all while it fills the index. */
const COUNTING_TRIGGERS = { ...STATE_COUNT_TRIGGERS, ...ACTIVITY_TRIGGERS };

const COUNTING_TRIGGERS_DDL = Object.entries(COUNTING_TRIGGERS)
  .map(([name, body]) => `CREATE TRIGGER IF NOT EXISTS ${name} ${body};`)
  .join("\n");

export const DROP_COUNTING_TRIGGERS = Object.keys(COUNTING_TRIGGERS)
  .map((name) => `DROP TRIGGER IF EXISTS ${name};`)
  .join("\n");

/** Count every state and the activity afresh (zeros included) and put the triggers back: the end of a rebuild. */
export const RECOUNT = `
UPDATE state_counts SET n = coalesce((SELECT count(*) FROM requests WHERE requests.state = state_counts.state), 0);
${REFILL_ACTIVITY}
${COUNTING_TRIGGERS_DDL}`;
