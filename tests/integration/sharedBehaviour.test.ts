import { afterEach, describe, expect, it } from "vitest";
import { isReqwatchError, TimeoutError } from "../../lib/model/errors";
import { openSharedTracker } from "../../lib/postgres/sharedTracker";
import { openTracker } from "../../lib/tracker";
import type { SharedTracker, TrackerOptions } from "../../lib/types";
import { aClock } from "../helpers/clock";
import { postgresForFile } from "../helpers/postgres";
import { tempStateDir } from "../helpers/stateDir";

// One behaviour, two stores: each test runs against the local tracker (files and SQLite, its calls
// wrapped in promises) and the shared one (PostgreSQL), through the same asynchronous face.

const MINUTE = 60_000;
type Face = Pick<
  SharedTracker,
  "create" | "transition" | "update" | "get" | "list" | "claimNext" | "heartbeat" | "complete" | "fail" | "waitForResult" | "close"
>;
type Settings = Pick<TrackerOptions, "now" | "random" | "maxAttempts">;

interface Store {
  name: string;
  /** A new, empty store, and a way to open a second tracker on it (another process's view). */
  open(settings: Settings): Promise<{ tracker: Face; another: () => Promise<Face> }>;
}

function promised(tracker: ReturnType<typeof openTracker>): Face {
  const face: Record<string, unknown> = {};
  for (const name of ["create", "transition", "update", "get", "list", "claimNext", "heartbeat", "complete", "fail", "waitForResult", "close"] as const) {
    const method = tracker[name] as (...args: unknown[]) => unknown;
    face[name] = async (...args: unknown[]) => method.apply(tracker, args);
  }
  return face as unknown as Face;
}

const cluster = postgresForFile();
const opened: Face[] = [];
afterEach(async () => {
  for (const tracker of opened.splice(0)) await tracker.close();
});

const STORES: Store[] = [
  {
    name: "local",
    async open(settings) {
      const stateDir = tempStateDir();
      const tracker = promised(openTracker({ stateDir, ...settings }));
      opened.push(tracker);
      return {
        tracker,
        another: async () => {
          const other = promised(openTracker({ stateDir, recover: false, ...settings }));
          opened.push(other);
          return other;
        },
      };
    },
  },
  {
    name: "shared",
    async open(settings) {
      const url = await cluster().newDatabase();
      const tracker = await openSharedTracker(url, settings);
      opened.push(tracker);
      return {
        tracker,
        another: async () => {
          const other = await openSharedTracker(url, settings);
          opened.push(other);
          return other;
        },
      };
    },
  },
];

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isReqwatchError(error)) return error.code;
    throw error;
  }
  return "no error";
}

describe.each(STORES)("the $name store", (store) => {
  async function queueOf(ids: string[]) {
    const clock = aClock();
    const { tracker, another } = await store.open({ now: clock.now, random: () => 0 });
    for (const requestId of ids) {
      clock.advance(10);
      await tracker.create({ requestId, workspace: requestId.startsWith("b") ? "beta" : "alpha", state: "queued" });
    }
    clock.advance(10);
    return { tracker, clock, another };
  }

  it("creates a request, refuses the same id twice and bad input, and reads it back", async () => {
    const { tracker } = await queueOf([]);
    const created = await tracker.create({ requestId: "r1", workspace: "w", prompt: "hello", model: "m1" });
    expect(created).toMatchObject({ requestId: "r1", workspace: "w", state: "created", prompt: "hello", version: 1 });
    expect(await tracker.get("r1")).toEqual(created);
    expect(await codeOf(tracker.create({ requestId: "r1", workspace: "w" }))).toBe("ALREADY_EXISTS");
    expect(await codeOf(tracker.create({ requestId: "bad id!", workspace: "w" }))).toBe("BAD_INPUT");
    expect(await codeOf(tracker.create({ requestId: "r2", workspace: "w", tokens: "many" as unknown as number }))).toBe("BAD_INPUT");
    expect(await tracker.get("r2")).toBeNull();
    expect(await tracker.get("nobody")).toBeNull();
  });

  it("moves along the transition table and refuses a move it does not list, changing nothing", async () => {
    const { tracker } = await queueOf([]);
    await tracker.create({ requestId: "r1", workspace: "w" });
    expect((await tracker.transition("r1", "queued", { reason: "ready" })).state).toBe("queued");
    const processing = await tracker.update("r1", { to: "processing", fields: { model: "m2" } });
    expect(processing).toMatchObject({ state: "processing", previousState: "queued", model: "m2", attempt: 1 });
    const done = await tracker.transition("r1", "completed");
    expect(await codeOf(tracker.transition("r1", "processing"))).toBe("INVALID_TRANSITION");
    expect(await tracker.get("r1")).toEqual(done);
    expect(done.transitions?.map((step) => `${step.from}->${step.to}`)).toEqual([
      "null->created",
      "created->queued",
      "queued->processing",
      "processing->completed",
    ]);
    expect(await codeOf(tracker.transition("nobody", "queued"))).toBe("NOT_FOUND");
  });

  it("lists requests newest first, filtered and paged", async () => {
    const { tracker } = await queueOf(["a1", "a2", "b1"]);
    const page = await tracker.list({ limit: 2 });
    expect(page.items.map((item) => item.requestId)).toEqual(["b1", "a2"]);
    const next = await tracker.list({ limit: 2, cursor: page.nextCursor! });
    expect(next).toMatchObject({ items: [{ requestId: "a1", state: "queued", workspace: "alpha" }], nextCursor: null });
    expect((await tracker.list({ workspace: "beta" })).items.map((item) => item.requestId)).toEqual(["b1"]);
  });

  it("claims the oldest ready queued request, per workspace, each once", async () => {
    const { tracker } = await queueOf(["a1", "a2", "b1"]);
    const claim = (await tracker.claimNext({ worker: "worker-A" }))!;
    expect(claim.request).toMatchObject({ requestId: "a1", state: "processing", attempt: 1, claim: { token: claim.token, pid: process.pid } });
    expect(claim.request.transitions?.at(-1)).toMatchObject({ from: "queued", to: "processing", reason: "claimed", by: "worker-A", token: claim.token });
    expect((await tracker.claimNext())!.request.requestId).toBe("a2");
    expect(await tracker.claimNext({ workspace: "alpha" })).toBeNull();
    expect((await tracker.claimNext({ workspace: "beta" }))!.request.requestId).toBe("b1");
    expect(await tracker.claimNext()).toBeNull();
  });

  it("heartbeats renew the current claim and refuse any other", async () => {
    const { tracker, clock } = await queueOf(["r1"]);
    const claim = (await tracker.claimNext())!;
    clock.advance(MINUTE);
    expect(await tracker.heartbeat("r1", claim.token)).toBe(true);
    expect(await tracker.heartbeat("r1", "not-the-token")).toBe(false);
    await tracker.complete("r1", claim.token);
    expect(await tracker.heartbeat("r1", claim.token)).toBe(false);
  });

  it("applies a completion under the current token, ignores a duplicate, and drops a late one as such", async () => {
    const { tracker } = await queueOf(["r1"]);
    const claim = (await tracker.claimNext())!;
    const applied = await tracker.complete("r1", claim.token, { output: "done", tokens: 5 });
    expect(applied).toMatchObject({ outcome: "applied", request: { state: "completed", output: "done", tokens: 5, claim: null } });
    expect((await tracker.complete("r1", claim.token, { output: "again" })).outcome).toBe("duplicate");
    const late = await tracker.complete("r1", "some-old-token", { output: "late" });
    expect(late).toMatchObject({ outcome: "dropped", reason: "late completion dropped: the request is already completed", request: { output: "done" } });
    expect((await tracker.get("r1"))?.transitions?.at(-1)).toMatchObject({ from: "completed", to: "completed", dropped: true, token: "some-old-token" });
  });

  it("fences a stale token: the result of a claim released and taken by another changes nothing", async () => {
    const { tracker } = await queueOf(["r1"]);
    const first = (await tracker.claimNext())!;
    await tracker.update("r1", { to: "queued", reason: "released by hand" });
    const second = (await tracker.claimNext())!;
    const late = await tracker.fail("r1", first.token, "stale failure");
    expect(late.outcome).toBe("dropped");
    expect(late.reason).toMatch(/claimed again by another worker/);
    expect(await tracker.get("r1")).toMatchObject({ state: "processing", attempt: 2, claim: { token: second.token } });
    expect((await tracker.complete("r1", second.token, { output: "fresh" })).request.output).toBe("fresh");
  });

  it("requeues a retryable failure with back-off, then fails for good after the last attempt", async () => {
    const { tracker, clock } = await queueOf(["r1"]);
    const claim = (await tracker.claimNext())!;
    const retried = await tracker.fail("r1", claim.token, "rate limited");
    expect(retried).toMatchObject({ outcome: "applied", reason: "retryable failure (attempt 1 of 3); next attempt in 1s" });
    expect(retried.request).toMatchObject({ state: "queued", attempt: 1, notBefore: clock.now() + 1000 });
    expect((await tracker.fail("r1", claim.token, "rate limited")).outcome).toBe("duplicate");
    // Not before its back-off is over.
    expect(await tracker.claimNext()).toBeNull();
    clock.advance(1000);
    for (let attempt = 2; attempt <= 3; attempt++) {
      const next = (await tracker.claimNext())!;
      expect(next.request).toMatchObject({ requestId: "r1", attempt });
      await tracker.fail("r1", next.token, `boom ${attempt}`);
      clock.advance(10 * MINUTE);
    }
    const failed = await tracker.get("r1");
    expect(failed).toMatchObject({ state: "failed", attempt: 3, error: "boom 3" });
    expect(failed?.transitions?.at(-1)?.reason).toBe("failed on attempt 3 of 3: no attempts left");
    await tracker.create({ requestId: "r2", workspace: "alpha", state: "queued" });
    const once = (await tracker.claimNext())!;
    expect((await tracker.fail("r2", once.token, "bad input", { retryable: false })).request).toMatchObject({ state: "failed", attempt: 1 });
  });

  it("waitForResult resolves when another tracker finishes the request, at once when it has, and times out otherwise", async () => {
    const { tracker, another } = await queueOf(["r1", "r2"]);
    const worker = await another();
    const claim = (await worker.claimNext())!;
    const waiting = tracker.waitForResult("r1", { timeoutMs: 20_000 });
    // Once the wait has begun (its first read), whatever the machine's pace.
    setImmediate(() => void worker.complete("r1", claim.token, { output: "ok" }));
    expect(await waiting).toMatchObject({ requestId: "r1", state: "completed", output: "ok" });
    expect((await tracker.waitForResult("r1", { timeoutMs: 1 })).state).toBe("completed");
    const timedOut = await tracker.waitForResult("r2", { timeoutMs: 50 }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(TimeoutError);
  });
});
