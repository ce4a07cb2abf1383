import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RequestRow, RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { installedBullmq } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { anAgent, closeAgents, factsOf, receivedOverMcp, timelineOutline } from "../helpers/mcpAgent";
import { childEnv, eventually, waitForExit, waitForLine, WORKERS, withOutput } from "../helpers/processes";
import { aRedisServer, type RedisServer } from "../helpers/redisServer";

// The real BullMQ (pinned, from the npm registry) traced as its users trace it: bullmq-otel's
// BullMQOtel as the Queue's and the Worker's telemetry, an OpenTelemetry SDK exporting over
// OTLP/protobuf to the dashboard's receiver. A producer and workers run as child processes against
// a real Redis; what the dashboard's API shows of each job is checked against what they did.
const SETTINGS = { port: 0, keepMs: 86_400_000, stuckAfterMs: 2000 };
let client: string;
let redis: RedisServer;
let receiver: string;
let stateDir: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  client = installedBullmq();
  redis = await aRedisServer();
  stateDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-bullmq-")), "state");
  // A job with nothing new for 2 s is stuck here (10 minutes by default).
  dashboard = await aDashboard({ stateDir }, SETTINGS, "file");
  receiver = (await dashboard.runtime.telemetry!.ready).url!;
}, 600_000);
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await waitForExit(child);
  }
});
afterAll(async () => {
  await closeAgents();
  await dashboard?.close();
  await redis?.stop();
  if (stateDir) fs.rmSync(path.dirname(stateDir), { recursive: true, force: true });
});

/** One of the scripts in tests/helpers/workers, with the telemetry a user sets: the SDK's own variables. */
function run(script: string, args: string[], env: Record<string, string> = {}): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [path.join(WORKERS, script), ...args], {
    env: {
      ...childEnv(),
      BULLMQ_CLIENT: client,
      REDIS_PORT: String(redis.port),
      SERVICE_NAME: "shop",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return withOutput(child);
}

interface Job {
  name: string;
  data: Record<string, unknown>;
  opts?: Record<string, unknown>;
}

/** Add jobs to a queue, as a producer process does; their ids by name. */
async function produce(queue: string, jobs: Job[]): Promise<Record<string, string>> {
  const producer = run("bullmqProducer.cjs", [queue, JSON.stringify(jobs)]);
  expect(await waitForExit(producer), producer.output()).toBe(0);
  return Object.fromEntries([...producer.output().matchAll(/^added (\S+) (\S+)$/gm)].map((match) => [match[1], match[2]]));
}

/** A worker for the queue, once it wrote `line` (a whole line: "completed 1" is not "completed 12"). */
async function worker(queue: string, line: string, env: Record<string, string> = {}) {
  const child = run("bullmqWorker.cjs", [queue], env);
  await waitForLine(child, `${line}\n`);
  return child;
}

async function get<T>(pathname: string): Promise<T> {
  const response = await dashboard.ask(pathname);
  expect(response.status, response.text).toBe(200);
  return response.json<T>();
}

/** The queue's jobs the dashboard shows, once `ready` says they are as expected. */
function jobsOf(queue: string, ready: (rows: RequestRow[]) => boolean): Promise<RequestRow[]> {
  return eventually(async () => {
    const page = await get<RequestsView>(`/api/requests?source=otel&workspace=${queue}&order=asc`);
    return ready(page.items) ? page.items : undefined;
  }, 30_000);
}

/** `reqwatch mcp` on the same state folder, as a coding agent asks it, with the dashboard's 2 s to be stuck: one for the file. */
let agent: Awaited<ReturnType<typeof anAgent>> | undefined;
const mcp = async () => (agent ??= await anAgent(stateDir, { REQWATCH_TELEMETRY_STUCK_AFTER: "2s" }));
/** A queue's jobs as an agent lists them over MCP. */
const jobsOverMcp = async (queue: string) => (await receivedOverMcp.rows(await mcp(), { workspace: queue })).items;

const view = (row: RequestRow) => get<SourceRequestView>(`/api/sources/otel/requests/${row.requestId}`);
const stepsOf = async (row: RequestRow) => ((await view(row)).steps ?? []).map((step) => `${step.name}: ${step.summary}`);

describe("BullMQ, run for real, seen through its own spans", () => {
  it("jobs that complete: each one message in its queue's workspace, added, processed once, completed with its result", async () => {
    const ids = await produce("emails", [
      { name: "welcome", data: {} },
      { name: "receipt", data: {} },
    ]);
    const consumer = await worker("emails", `completed ${ids.receipt}`);
    expect(consumer.output()).toContain(`completed ${ids.welcome}`);
    const rows = await jobsOf("emails", (items) => items.length === 2 && items.every((item) => item.state === "completed"));
    expect(rows.map((row) => [row.workspace, row.attempt, row.stuckReason, row.source])).toEqual([
      ["emails", 1, null, "otel"],
      ["emails", 1, null, "otel"],
    ]);
    const welcome = await view(rows[0]!);
    expect(welcome.request).toMatchObject({ state: "completed", output: '{"done":"welcome"}' });
    expect(welcome.request.completedAt).toBeGreaterThanOrEqual(welcome.request.createdAt);
    expect(await stepsOf(rows[1]!)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(`^add: receipt #${ids.receipt} into emails`),
        expect.stringMatching(`^process \\(attempt 1\\): receipt #${ids.receipt} completed`),
        `completed: receipt #${ids.receipt} moved to completed`,
      ]),
    );
  }, 120_000);

  it("fails twice, then succeeds (attempts: 3): completed after 3 attempts, each failure's reason in its attempt", async () => {
    const ids = await produce("invoices", [{ name: "charge", data: { fail: 2 }, opts: { attempts: 3, backoff: { type: "fixed", delay: 20 } } }]);
    const consumer = await worker("invoices", `completed ${ids.charge}`);
    expect(consumer.output().match(/^failed .*$/gm)).toEqual([
      `failed ${ids.charge} charge refused on attempt 1`,
      `failed ${ids.charge} charge refused on attempt 2`,
    ]);
    const [row] = await jobsOf("invoices", (items) => items[0]?.state === "completed" && items[0].attempt === 3);
    expect((await view(row!)).request).toMatchObject({ state: "completed", attempt: 3 });
    expect((await view(row!)).request.error).toBeUndefined();
    const steps = await stepsOf(row!);
    expect(steps).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^process \(attempt 1\): charge #\d+ failed: charge refused on attempt 1/),
        expect.stringMatching(/^process \(attempt 2\): charge #\d+ failed: charge refused on attempt 2/),
        expect.stringMatching(/^process \(attempt 3\): charge #\d+ completed/),
      ]),
    );
    expect(steps.filter((step) => step.startsWith("retry later: "))).toHaveLength(2);
    // Over MCP, as the worker printed it: completed on the third attempt, each failed one with its reason, no error left.
    expect(await jobsOverMcp("invoices")).toEqual([expect.objectContaining({ requestId: row!.requestId, state: "completed", attempt: 3 })]);
    const job = await receivedOverMcp.lifecycle(await mcp(), row!.requestId);
    expect(job.request.error).toBeUndefined();
    expect(factsOf(job)).toMatchObject({ Kind: "message", Attempts: "3" });
    expect(
      timelineOutline(job)
        .map((line) => line.trim())
        .filter((line) => line.startsWith("process ")),
    ).toEqual([
      expect.stringMatching(/^process \(attempt 1\), \d+(\.\d+)? m?s, failed: charge refused on attempt 1$/),
      expect.stringMatching(/^process \(attempt 2\), \d+(\.\d+)? m?s, failed: charge refused on attempt 2$/),
      expect.stringMatching(/^process \(attempt 3\), \d+(\.\d+)? m?s$/),
    ]);
    const story = await receivedOverMcp.story(await mcp(), row!.requestId);
    expect(story).toContain("Attempt 3.");
    expect(story).not.toContain("Error:");
  }, 120_000);

  it("failed once, its next attempt after a long backoff: queued again while it waits, with the failed attempt's reason", async () => {
    // A backoff long enough that the test looks while it waits: the job is looked at after the worker said its attempt failed.
    const ids = await produce("refunds", [{ name: "refund", data: { fail: 1 }, opts: { attempts: 2, backoff: { type: "fixed", delay: 600_000 } } }]);
    await worker("refunds", `failed ${ids.refund} refund refused on attempt 1`);
    // Once both its attempt's span and the `delay` inside it have arrived (a batch may hold one without the other).
    await eventually(async () => {
      const [job] = await jobsOf("refunds", (items) => items[0]?.attempt === 1);
      return (await stepsOf(job!)).some((step) => step.startsWith("retry later: ")) || undefined;
    }, 30_000);
    const [row] = await jobsOf("refunds", (items) => items.length === 1);
    expect(row).toMatchObject({ state: "queued", attempt: 1 });
    expect((await view(row!)).request).toMatchObject({ state: "queued", error: "refund refused on attempt 1" });
    expect(await stepsOf(row!)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^process \(attempt 1\): refund #\d+ failed: refund refused on attempt 1/),
        `retry later: refund #${ids.refund} back to delayed: it runs again after its backoff`,
      ]),
    );
  }, 120_000);

  it("fails on every attempt (attempts: 2): failed for good, with its reason and its attempts", async () => {
    const ids = await produce("reports", [{ name: "render", data: { fail: "always" }, opts: { attempts: 2, backoff: { type: "fixed", delay: 20 } } }]);
    await worker("reports", `failed ${ids.render} render refused on attempt 2`);
    const [row] = await jobsOf("reports", (items) => items[0]?.state === "failed");
    expect(row).toMatchObject({ workspace: "reports", attempt: 2, stuckReason: null });
    expect((await view(row!)).request).toMatchObject({ state: "failed", error: "render refused on attempt 2" });
    expect(await stepsOf(row!)).toEqual(expect.arrayContaining([`failed: render #${ids.render} moved to failed: it runs no more`]));
    // Over MCP: failed for good with the last reason, after its two attempts.
    expect(await jobsOverMcp("reports")).toEqual([expect.objectContaining({ requestId: row!.requestId, state: "failed", attempt: 2 })]);
    const job = await receivedOverMcp.lifecycle(await mcp(), row!.requestId);
    expect(factsOf(job)).toMatchObject({ Attempts: "2", Error: "render refused on attempt 2" });
    expect(await receivedOverMcp.story(await mcp(), row!.requestId)).toContain("Error: render refused on attempt 2");
  }, 120_000);

  it("its worker killed while holding it: stuck while nothing is heard; then another worker finds it stalled, and it completes", async () => {
    const ids = await produce("exports", [{ name: "archive", data: { hold: true } }]);
    // A short lock, so that it is let go soon after its worker dies; a short stalled interval, as a
    // worker's check also keeps the others' off for that long.
    const holder = await worker("exports", `holding ${ids.archive}`, { HOLD: "1", LOCK_DURATION: "1000", STALLED_INTERVAL: "300" });
    holder.kill("SIGKILL");
    await waitForExit(holder);
    const [stuck] = await jobsOf("exports", (items) => items[0]?.stuckReason != null);
    expect(stuck).toMatchObject({ state: "queued" });
    expect(stuck!.stuckReason).toMatch(new RegExp(`^nothing received for .*; last: add: archive #${ids.archive} into exports`));
    // An agent asking over MCP sees it stuck, and why.
    expect(await jobsOverMcp("exports")).toEqual([
      expect.objectContaining({ requestId: stuck!.requestId, state: "queued", stuckReason: expect.stringMatching(/^nothing received for /) }),
    ]);
    expect(await receivedOverMcp.story(await mcp(), stuck!.requestId)).toMatch(/Stuck: nothing received for .*; last: add: archive #\d+ into exports/);
    const rescuer = await worker("exports", `completed ${ids.archive}`, { LOCK_DURATION: "1000", STALLED_INTERVAL: "300" });
    expect(rescuer.output()).toContain(`stalled ${ids.archive}`);
    const [row] = await jobsOf("exports", (items) => items[0]?.state === "completed");
    expect(row).toMatchObject({ requestId: stuck!.requestId, attempt: 1, stuckReason: null });
    const steps = await stepsOf(row!);
    expect(steps).toEqual(
      expect.arrayContaining([
        expect.stringMatching(`^stalled: #${ids.archive} its worker stopped holding it; back to waiting`),
        expect.stringMatching(`^process \\(attempt 1\\): archive #${ids.archive} completed`),
      ]),
    );
    // Stalled before the attempt that completed it.
    expect(steps.findIndex((step) => step.startsWith("stalled: "))).toBeLessThan(steps.findIndex((step) => step.startsWith("process ")));
    // Over MCP: completed once found stalled, no longer stuck.
    expect(await jobsOverMcp("exports")).toEqual([expect.objectContaining({ requestId: row!.requestId, state: "completed", stuckReason: null })]);
    expect(await receivedOverMcp.story(await mcp(), row!.requestId)).toContain("Not stuck.");
  }, 120_000);
});
