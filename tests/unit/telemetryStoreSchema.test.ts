import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { telemetryQueue } from "../../lib/sources/telemetryQueue";
import { openSourceDb } from "../../lib/sqlite/openSourceDb";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { exportsOf, feed } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";

describe("the telemetry store's schema", () => {
  it("brings a store an earlier release made to this one's: its steps kept, new steps with when they began and what they were inside", () => {
    const file = path.join(tempParent(), "telemetry.db");
    // The earlier release's steps table, with a step in it.
    const old = new Database(file);
    old.exec(`CREATE TABLE lifecycles (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, service TEXT NOT NULL, session TEXT, trace_id TEXT, state TEXT NOT NULL, started_at REAL NOT NULL, queued_at REAL, processing_at REAL, finished_at REAL, first_at REAL NOT NULL, last_at REAL NOT NULL, received_at INTEGER NOT NULL, prompt TEXT, output TEXT, error TEXT, model TEXT, attempt INTEGER, last_step TEXT NOT NULL, calls INTEGER NOT NULL, tools INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL);
      CREATE TABLE steps (seq INTEGER NOT NULL, step_key TEXT NOT NULL, at REAL NOT NULL, name TEXT NOT NULL, summary TEXT NOT NULL, detail TEXT NOT NULL, facts TEXT NOT NULL, PRIMARY KEY (seq, step_key)) WITHOUT ROWID;
      INSERT INTO steps VALUES (99, 'log:old', 1, 'user_prompt', 'an old step', '{}', '{}');`);
    old.close();

    const store = new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 });
    feed(store, exportsOf("tool"));
    store.close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(5);
    expect(db.prepare("SELECT summary FROM steps WHERE step_key = 'log:old'").pluck().get()).toBe("an old step");
    // The columns an agent's files fill (what a turn waits on, the run that ended mid-turn), and where each file was read to.
    expect(db.prepare("SELECT name FROM pragma_table_info('lifecycles')").pluck().all()).toEqual(
      expect.arrayContaining(["waiting_on", "abandoned_by", "abandoned_at"]),
    );
    expect(db.prepare("SELECT count(*) FROM agent_files").pluck().get()).toBe(0);
    db.close();

    // The tool turn's steps say when they began, and the tool's span is nested in the turn's.
    const source = openSourceDb(file, "telemetry store");
    try {
      const seq = source.prepare("SELECT seq FROM lifecycles WHERE kind = 'turn' AND calls = 2").pluck().get() as number;
      const steps = telemetryQueue(file, 600_000).details!(source, String(seq)).steps ?? [];
      const tool = steps.find((step) => step.name === "tool Bash")!;
      expect(tool.startAt).toBeLessThan(tool.at);
      expect(steps.find((step) => step.key === tool.parentKey)).toBeDefined();
      // And which call or tool use each told of (the decision tells of no part: its detail's use id draws it with them).
      expect(steps.filter((step) => step.partKey === "tool toolu_1").map((step) => step.name)).toEqual(["tool Bash", "tool_result"]);
    } finally {
      source.close();
    }
  });

  it("a new store is made at this release's version, so nothing is migrated twice", () => {
    const file = path.join(tempParent(), "telemetry.db");
    new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 }).close();
    new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 }).close();
    const db = new Database(file, { readonly: true });
    expect(db.prepare("SELECT name FROM pragma_table_info('steps')").pluck().all()).toEqual(expect.arrayContaining(["start_at", "parent_key", "part_key"]));
    expect(db.pragma("user_version", { simple: true })).toBe(5);
    db.close();
  });
});
