import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { isReqwatchError, type ErrorCode } from "../../lib/model/errors";
import { STATES } from "../../lib/model/states";
import { resolveTrackerOptions } from "../../lib/store/options";
import type { TrackerOptions } from "../../lib/types";
import { openRoles, openTracker } from "../../lib/tracker";
import { aGatewayRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, aTracker, readRaw, requestPath, tempStateDir } from "../helpers/stateDir";

function codeOf(fn: () => unknown): { code: ErrorCode | undefined; message: string } {
  try {
    fn();
  } catch (error) {
    return { code: isReqwatchError(error) ? error.code : undefined, message: (error as Error).message };
  }
  throw new Error("expected an error");
}

/** A clock the test moves by hand, so times are exact. */
function aClock(start = 1_800_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("create and get", () => {
  it("creates a request file, indexes it, and returns it by id", () => {
    const stateDir = tempStateDir();
    const clock = aClock();
    const tracker = aTracker({ stateDir, now: clock.now });

    const created = tracker.create({ requestId: "req-1", workspace: "gw", chatId: 42, prompt: "hello", model: "m" });

    expect(created).toMatchObject({
      requestId: "req-1",
      workspace: "gw",
      state: "created",
      chatId: 42,
      createdAt: clock.now(),
      lastUpdatedAt: clock.now(),
      version: 1,
    });
    expect(created.transitions).toEqual([{ from: null, to: "created", at: clock.now() }]);
    expect(JSON.parse(readRaw(stateDir, "req-1"))).toEqual(created);
    expect(tracker.get("req-1")).toEqual(created);
    expect(tracker.get("nope")).toBeNull();
  });

  it("gives a request a UUID when no id is passed", () => {
    const created = aTracker().create({ workspace: "gw" });
    expect(created.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("can start a request queued, recording created first", () => {
    const created = aTracker().create({ requestId: "q", workspace: "gw", state: "queued" });
    expect(created.state).toBe("queued");
    expect(created.version).toBe(1);
    expect(created.transitions?.map((t) => `${t.from}->${t.to}`)).toEqual(["null->created", "created->queued"]);
  });

  it("refuses to create over an existing request and changes nothing", () => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    tracker.create({ requestId: "dup", workspace: "gw", prompt: "first" });
    const before = readRaw(stateDir, "dup");
    expect(codeOf(() => tracker.create({ requestId: "dup", workspace: "gw", prompt: "second" })).code).toBe("ALREADY_EXISTS");
    expect(readRaw(stateDir, "dup")).toBe(before);
  });
});

describe("updates", () => {
  it("bumps the version, sets lifecycle times and appends every write to the history", () => {
    const clock = aClock();
    const tracker = aTracker({ now: clock.now });
    tracker.create({ requestId: "r", workspace: "gw" });
    clock.advance(10);
    tracker.transition("r", "queued");
    clock.advance(20);
    tracker.transition("r", "processing", { by: "worker-1" });
    clock.advance(30);
    tracker.update("r", { fields: { callback: { success: true, attempts: 2, retryTimestamps: ["t1"] } }, reason: "delivered" });
    clock.advance(40);
    const done = tracker.transition("r", "completed", { fields: { output: "ok", tokens: 7, exitCode: 0 } });

    expect(done).toMatchObject({
      state: "completed",
      previousState: "processing",
      version: 5,
      attempt: 1,
      queuedAt: 1_800_000_000_010,
      processingStartedAt: 1_800_000_000_030,
      completedAt: 1_800_000_000_100,
      lastUpdatedAt: 1_800_000_000_100,
      output: "ok",
      tokens: 7,
      callback: { success: true, attempts: 2, retryTimestamps: ["t1"] },
    });
    expect(done.transitions?.map((t) => `${t.from}->${t.to}`)).toEqual([
      "null->created",
      "created->queued",
      "queued->processing",
      "processing->processing",
      "processing->completed",
    ]);
    expect(done.transitions?.[3]).toMatchObject({ reason: "delivered", fields: ["callback"] });
    expect(done.transitions?.[2]).toMatchObject({ by: "worker-1" });
  });

  it("passes the current request to a function, for read-modify-write", () => {
    const tracker = aTracker();
    tracker.create({ requestId: "c", workspace: "gw", counter: 0 } as never);
    for (let i = 0; i < 5; i++) tracker.update("c", (current) => ({ fields: { counter: (current.counter as number) + 1 } }));
    expect(tracker.get("c")?.counter).toBe(5);
  });

  it("refuses managed fields and wrongly typed fields, changing nothing", () => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    tracker.create({ requestId: "f", workspace: "gw" });
    const before = readRaw(stateDir, "f");
    expect(codeOf(() => tracker.update("f", { fields: { version: 99 } as never })).message).toMatch(/'version' is managed/);
    expect(codeOf(() => tracker.update("f", { fields: { tokens: "many" } as never })).message).toMatch(/field 'tokens'/);
    expect(codeOf(() => tracker.update("missing", { fields: { model: "m" } })).code).toBe("NOT_FOUND");
    expect(readRaw(stateDir, "f")).toBe(before);
  });

  it("an update that changes nothing writes nothing: no version, no history entry, the file untouched", () => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    tracker.create({ requestId: "same", workspace: "gw", model: "m", meta: { tags: ["a", "b"] } } as never);
    const written = tracker.update("same", { fields: { tokens: 5 } });
    const before = readRaw(stateDir, "same");
    const stat = fs.statSync(requestPath(stateDir, "same"));
    for (const change of [
      { fields: { tokens: 5 } },
      { fields: { model: "m", tokens: 5, meta: { tags: ["a", "b"] } } as never },
      { reason: "nothing new" },
      {},
    ]) {
      expect(tracker.update("same", change)).toEqual(written);
    }
    expect(readRaw(stateDir, "same")).toBe(before);
    expect(fs.statSync(requestPath(stateDir, "same")).ino).toBe(stat.ino);
    // A value that differs, however deep, is a change.
    expect(tracker.update("same", { fields: { meta: { tags: ["a", "c"] } } as never }).version).toBe(written.version! + 1);
    expect(tracker.update("same", { fields: { tokens: 6 } }).transitions?.at(-1)).toMatchObject({ fields: ["tokens"] });
  });

  it("a retry clears the old outcome but keeps it in the history", () => {
    const tracker = aTracker();
    tracker.create({ requestId: "t", workspace: "gw", state: "processing" });
    tracker.transition("t", "timeout");
    const retried = tracker.transition("t", "queued", { reason: "manual retry" });
    expect(retried.timedOut).toBe(false);
    expect(retried.completedAt).toBeUndefined();
    expect(retried.transitions?.some((t) => t.to === "timeout")).toBe(true);
  });
});

describe("files written by other tools", () => {
  it("loads a chat gateway's file (no version, claim or history) and keeps fields it does not know on rewrite", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aGatewayRequest("gateway-1"));
    writeRequestFile(stateDir, { ...aGatewayRequest("gateway-2"), chatId: "chat-abc", requestId: "gateway-2" });
    const tracker = aTracker({ stateDir });

    expect(tracker.get("gateway-1")).toMatchObject({ chatId: 123456789, state: "processing", gatewayHost: "builder-7" });
    expect(tracker.get("gateway-2")?.chatId).toBe("chat-abc");

    const done = tracker.transition("gateway-1", "completed", { fields: { output: "done" } });
    expect(done.version).toBe(1);
    const onDisk = JSON.parse(readRaw(stateDir, "gateway-1"));
    expect(onDisk.gatewayHost).toBe("builder-7");
    expect(onDisk.callback).toEqual({ success: false, attempts: 1, retryTimestamps: ["2026-02-07T10:00:00Z"] });
    expect(onDisk.transitions).toEqual([{ from: "processing", to: "completed", at: done.lastUpdatedAt, fields: ["output"] }]);
  });

  it("ignores a gateway's by-workspace copies and temp files", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aGatewayRequest("main-copy"));
    fs.mkdirSync(path.join(stateDir, "requests/by-workspace/gateway"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "requests/by-workspace/gateway/main-copy.json"), "{}");
    fs.writeFileSync(path.join(stateDir, "requests/main-copy.json.tmp"), "{");
    const tracker = aTracker({ stateDir });
    expect(tracker.list().items.map((r) => r.requestId)).toEqual(["main-copy"]);
    expect(tracker.openReport?.unreadable).toEqual([]);
  });
});

describe("ids and workspace names are checked before they touch a path", () => {
  const badIds = ["../x", "a/b", "", "x".repeat(200), "nul\0byte", "..", "a\\b", "/etc/passwd", "ünïcode"];

  it.each(badIds)("refuses the id %j everywhere, with a clear error", (bad) => {
    const stateDir = tempStateDir();
    const { tracker, operator } = aRecording({ stateDir });
    for (const call of [
      () => tracker.create({ requestId: bad, workspace: "gw" }),
      () => tracker.get(bad),
      () => tracker.update(bad, { fields: { model: "m" } }),
      () => tracker.transition(bad, "queued"),
      () => operator.restore(bad),
    ]) {
      const { code, message } = codeOf(call);
      expect(code).toBe("BAD_INPUT");
      expect(message).toMatch(/^Invalid request id/);
    }
    expect(fs.readdirSync(path.join(stateDir, "requests"))).toEqual([]);
    expect(fs.existsSync(path.join(stateDir, "x"))).toBe(false);
  });

  it.each(["../x", "a/b", "", "w".repeat(65), "nul\0"])("refuses the workspace %j", (bad) => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    expect(codeOf(() => tracker.create({ requestId: "ok", workspace: bad })).message).toMatch(/^Invalid workspace/);
    expect(fs.readdirSync(path.join(stateDir, "requests"))).toEqual([]);
  });
});

describe("listing", () => {
  function seeded() {
    const clock = aClock();
    const recording = aRecording({ now: clock.now });
    const { tracker } = recording;
    const plan: [string, string, "created" | "queued" | "processing", string?][] = [
      ["a1", "alpha", "queued", "s1"],
      ["a2", "alpha", "processing", "s1"],
      ["a3", "alpha", "created"],
      ["b1", "beta", "queued", "s2"],
      ["b2", "beta", "processing"],
      ["b3", "beta", "queued", "s2"],
    ];
    for (const [requestId, workspace, state, sessionId] of plan) {
      clock.advance(1000);
      tracker.create({ requestId, workspace, state, ...(sessionId && { sessionId }) });
    }
    clock.advance(1000);
    tracker.transition("a2", "completed");
    return { ...recording, clock };
  }

  it("filters by workspace, states, session and time, newest update first", () => {
    const { tracker, clock } = seeded();
    const ids = (filters: Parameters<typeof tracker.list>[0]) => tracker.list(filters).items.map((r) => r.requestId);
    expect(ids({})).toEqual(["a2", "b3", "b2", "b1", "a3", "a1"]);
    expect(ids({ workspace: "beta" })).toEqual(["b3", "b2", "b1"]);
    expect(ids({ states: ["queued"] })).toEqual(["b3", "b1", "a1"]);
    expect(ids({ states: ["processing", "completed"] })).toEqual(["a2", "b2"]);
    expect(ids({ sessionId: "s2" })).toEqual(["b3", "b1"]);
    const start = clock.now() - 7000;
    expect(ids({ createdFrom: start + 2000, createdTo: start + 4000 })).toEqual(["a2", "a3"]);
    expect(ids({ updatedFrom: clock.now() })).toEqual(["a2"]);
    expect(ids({ sort: "createdAt", order: "asc" })).toEqual(["a1", "a2", "a3", "b1", "b2", "b3"]);
  });

  it("pages with a keyset cursor without gaps or repeats", () => {
    const { tracker } = seeded();
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = tracker.list({ limit: 4, cursor });
      seen.push(...page.items.map((r) => r.requestId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(["a2", "b3", "b2", "b1", "a3", "a1"]);
  });

  it("pages rows with equal sort keys without gaps or repeats, by id within a key", () => {
    const clock = aClock();
    const tracker = aTracker({ now: clock.now });
    // One frozen clock: every request has the same createdAt and lastUpdatedAt, so the id alone orders them.
    const ids = ["e", "a", "g", "c", "b", "f", "d"];
    ids.forEach((requestId, i) => tracker.create({ requestId, workspace: "same", state: i % 2 ? "queued" : "created" }));
    const sorted = [...ids].sort();
    const walk = (filters: Parameters<typeof tracker.list>[0]) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = tracker.list({ ...filters, limit: 2, cursor });
        seen.push(...page.items.map((r) => r.requestId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return seen;
    };
    for (const sort of ["updatedAt", "createdAt"] as const) {
      expect(walk({ sort, order: "asc" })).toEqual(sorted);
      expect(walk({ sort, order: "desc" })).toEqual([...sorted].reverse());
    }
    // Two states sorted by update: the merge of one walk per state pages the same way.
    expect(walk({ states: ["created", "queued"] })).toEqual([...sorted].reverse());
  });

  it("returns summaries with the time the request entered its state", () => {
    const { tracker, clock } = seeded();
    const [first] = tracker.list({ limit: 1 }).items;
    expect(first).toMatchObject({
      requestId: "a2",
      state: "completed",
      previousState: "processing",
      stateSince: clock.now(),
      workspace: "alpha",
      sessionId: "s1",
      attempt: 1,
    });
    expect(first).not.toHaveProperty("doc");
  });

  it("counts every state, zeros included", () => {
    const { reader } = seeded();
    expect(reader.countsByState()).toEqual({ created: 1, queued: 3, processing: 1, completed: 1, failed: 0, timeout: 0 });
    expect(reader.countsByState({ workspace: "alpha" })).toEqual({ created: 1, queued: 1, processing: 0, completed: 1, failed: 0, timeout: 0 });
  });

  it("keeps the counts in step with the rows through every kind of write, a rebuild included", () => {
    const stateDir = tempStateDir();
    const { tracker, reader, operator } = aRecording({ stateDir });
    // What the counts must be: a scan of the rows, as the index held them before it kept counts.
    const scanned = () => {
      const db = new Database(path.join(stateDir, "index.db"), { readonly: true });
      try {
        const counts = Object.fromEntries(STATES.map((state) => [state, 0]));
        for (const row of db.prepare("SELECT state, count(*) AS n FROM requests GROUP BY state").all() as { state: string; n: number }[])
          counts[row.state] = row.n;
        return counts;
      } finally {
        db.close();
      }
    };
    const check = (expected: Partial<Record<(typeof STATES)[number], number>>) => {
      const counts = reader.countsByState();
      expect(counts).toEqual(scanned());
      expect(counts).toMatchObject(expected);
    };
    for (let i = 0; i < 6; i++) tracker.create({ requestId: `r${i}`, workspace: "gw", state: "queued" });
    check({ queued: 6 });
    tracker.transition("r0", "processing");
    tracker.transition("r0", "completed", { fields: { output: "done" } });
    tracker.transition("r1", "processing");
    tracker.transition("r1", "failed");
    tracker.transition("r1", "queued"); // A retry.
    tracker.update("r2", { fields: { model: "m" } }); // A write that leaves the state alone.
    check({ queued: 5, completed: 1 });
    // Another tool rewrites a file (ingest), and deletes one (reconciliation).
    const edited = JSON.parse(fs.readFileSync(requestPath(stateDir, "r3"), "utf8"));
    fs.writeFileSync(
      requestPath(stateDir, "r3"),
      JSON.stringify({ ...edited, state: "timeout", version: edited.version + 1, lastUpdatedAt: edited.lastUpdatedAt + 1 }),
    );
    fs.rmSync(requestPath(stateDir, "r4"));
    operator.recover();
    check({ queued: 3, completed: 1, timeout: 1 });
    // Cleanup archives and removes; restore brings one back.
    expect(operator.cleanup({ olderThanMs: 0, states: ["completed", "timeout"] }).archived).toBe(2);
    check({ completed: 0, timeout: 0 });
    operator.restore("r0");
    check({ queued: 3, completed: 1 });
    // A rebuilt index counts the files afresh.
    tracker.close();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
    const reopened = aRecording({ stateDir });
    expect(reopened.reader.countsByState()).toEqual({ created: 0, queued: 3, processing: 0, completed: 1, failed: 0, timeout: 0 });
    // The rebuild filled the index without the triggers and counted once at its end: they are back for what follows.
    reopened.tracker.create({ requestId: "after-rebuild", workspace: "gw", state: "queued" });
    reopened.tracker.transition("r2", "processing");
    expect(reopened.reader.countsByState()).toEqual({ ...scanned(), queued: 3, processing: 1 });
    expect(reopened.reader.countsByState()).toEqual(scanned());
  });

  it("refuses bad filters and foreign cursors", () => {
    const { tracker } = seeded();
    expect(codeOf(() => tracker.list({ states: ["done" as never] })).message).toMatch(/field 'states.0'/);
    expect(codeOf(() => tracker.list({ limit: 0 })).code).toBe("BAD_INPUT");
    expect(codeOf(() => tracker.list({ cursor: "garbage" })).message).toMatch(/Invalid cursor/);
    const cursor = tracker.list({ limit: 1 }).nextCursor!;
    expect(codeOf(() => tracker.list({ cursor, sort: "createdAt" })).message).toMatch(/another sort order/);
  });
});

describe("the index", () => {
  it("is rebuilt from the files when deleted", () => {
    const stateDir = tempStateDir();
    const first = openRoles({ stateDir });
    first.tracker.create({ requestId: "keep-1", workspace: "gw", state: "queued" });
    first.tracker.create({ requestId: "keep-2", workspace: "gw" });
    const generation = first.reader.generation();
    first.close();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });

    const second = aRecording({ stateDir, recover: false }).reader;
    expect(
      second
        .list()
        .items.map((r) => r.requestId)
        .sort(),
    ).toEqual(["keep-1", "keep-2"]);
    expect(second.get("keep-1")?.state).toBe("queued");
    expect(second.generation()).not.toBe(generation);
  });

  it("is replaced when it is not a database", () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aGatewayRequest("survivor"));
    fs.writeFileSync(path.join(stateDir, "index.db"), "this is not sqlite");
    const tracker = aTracker({ stateDir });
    expect(tracker.get("survivor")?.state).toBe("processing");
  });
});

describe("options", () => {
  it("keeps the settings as they were resolved at open: frozen, so no part of the folder changes them for another", () => {
    const tracker = aTracker();
    expect(Object.isFrozen(tracker.options) && Object.isFrozen(tracker.options.backoff)).toBe(true);
    expect(() => Object.assign(tracker.options, { maxAttempts: 9 })).toThrow(TypeError);
    expect(tracker.options.maxAttempts).toBe(3);
  });

  it("are checked up front with exact messages", () => {
    expect(codeOf(() => openTracker({ statedir: "/tmp/x" } as never)).message).toBe('Unknown option "statedir" should be "stateDir".');
    expect(codeOf(() => openTracker({ processingStuckAfterMs: -1 })).message).toBe(
      'Option "processingStuckAfterMs" must be a positive number of milliseconds.',
    );
    expect(codeOf(() => openTracker({ claimDurability: "weak" as never })).message).toBe('Option "claimDurability" must be "atomic" or "full", not "weak".');
    expect(codeOf(() => openTracker({ backoff: { base: 1 } as never })).message).toBe('Unknown option "backoff.base" (known: baseMs, capMs, jitter).');
    expect(codeOf(() => openTracker({ maxAttempts: 0 })).message).toBe('Option "maxAttempts" must be a whole number of at least 1.');
  });

  it("refuse a renamed setting's old name, option or variable, with one line naming the new one", () => {
    // An environment of these settings alone (the process's own might set them).
    const env = (settings: Record<string, string>) => settings as NodeJS.ProcessEnv;
    expect(codeOf(() => resolveTrackerOptions({ hungAfterMs: 20 * 60_000 } as TrackerOptions, env({})))).toEqual({
      code: "BAD_INPUT",
      message: 'Option "hungAfterMs" is renamed "processingStuckAfterMs": give "processingStuckAfterMs" instead.',
    });
    expect(codeOf(() => resolveTrackerOptions({}, env({ REQWATCH_HUNG_AFTER: "2h" })))).toEqual({
      code: "BAD_INPUT",
      message: "REQWATCH_HUNG_AFTER is renamed REQWATCH_PROCESSING_STUCK_AFTER: set REQWATCH_PROCESSING_STUCK_AFTER instead.",
    });
    const stateDir = tempStateDir();
    const before = fs.readdirSync(stateDir);
    expect(codeOf(() => openTracker({ stateDir, hungAfterMs: 1000 } as TrackerOptions)).code).toBe("BAD_INPUT");
    expect(fs.readdirSync(stateDir)).toEqual(before);
  });

  it("take the state directory from REQWATCH_STATE_DIR", () => {
    const stateDir = tempStateDir();
    const previous = process.env.REQWATCH_STATE_DIR;
    process.env.REQWATCH_STATE_DIR = stateDir;
    try {
      const { tracker, reader } = openRoles();
      expect(reader.stateDir.root).toBe(stateDir);
      tracker.create({ requestId: "env", workspace: "gw" });
      tracker.close();
      expect(fs.existsSync(requestPath(stateDir, "env"))).toBe(true);
    } finally {
      if (previous === undefined) delete process.env.REQWATCH_STATE_DIR;
      else process.env.REQWATCH_STATE_DIR = previous;
    }
  });
});
