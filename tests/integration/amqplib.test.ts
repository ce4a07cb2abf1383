import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RequestRow, RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { installedAmqplib } from "../helpers/clients";
import { aDashboard } from "../helpers/dashboard";
import { anAgent, closeAgents, receivedOverMcp, timelineOutline } from "../helpers/mcpAgent";
import { childEnv, eventually, waitForExit, waitForLine, WORKERS, withOutput } from "../helpers/processes";
import { aRabbitmqServer, type RabbitmqServer } from "../helpers/rabbitmqServer";

// The real amqplib (pinned, from the npm registry) traced by @opentelemetry/instrumentation-amqplib,
// which names what it traces in the older messaging conventions (messaging.message_id,
// messaging.operation, messaging.destination), exporting over OTLP/protobuf to the dashboard's
// receiver; a publisher and a consumer run as child processes against a real RabbitMQ.
let client: string;
let rabbitmq: RabbitmqServer;
let receiver: string;
let stateDir: string;
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  client = installedAmqplib();
  rabbitmq = await aRabbitmqServer();
  stateDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-amqplib-")), "state");
  dashboard = await aDashboard({ stateDir }, { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 }, "file");
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
  await rabbitmq?.stop();
  if (stateDir) fs.rmSync(path.dirname(stateDir), { recursive: true, force: true });
});

function run(script: string, args: string[]): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [path.join(WORKERS, script), ...args], {
    env: {
      ...childEnv(),
      AMQP_CLIENT: client,
      AMQP_PORT: String(rabbitmq.port),
      SERVICE_NAME: "shop",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return withOutput(child);
}

async function publish(queue: string, messages: { id: string; body: string }[]) {
  const publisher = run("amqpPublisher.cjs", [queue, JSON.stringify(messages)]);
  expect(await waitForExit(publisher), publisher.output()).toBe(0);
}

async function get<T>(pathname: string): Promise<T> {
  const response = await dashboard.ask(pathname);
  expect(response.status, response.text).toBe(200);
  return response.json<T>();
}

function messagesOf(queue: string, ready: (rows: RequestRow[]) => boolean | Promise<boolean>): Promise<RequestRow[]> {
  return eventually(async () => {
    const page = await get<RequestsView>(`/api/requests?source=otel&workspace=${queue}&order=asc`);
    return (await ready(page.items)) ? page.items : undefined;
  }, 30_000);
}

/** `reqwatch mcp` on the same state folder, as a coding agent asks it: one for the file. */
let agent: Awaited<ReturnType<typeof anAgent>> | undefined;
const mcp = async () => (agent ??= await anAgent(stateDir));

const stepsOf = async (row: RequestRow) =>
  ((await get<SourceRequestView>(`/api/sources/otel/requests/${row.requestId}`)).steps ?? []).map((step) => `${step.name}: ${step.summary}`);

describe("amqplib with its OpenTelemetry instrumentation, against a real RabbitMQ (the older messaging conventions)", () => {
  it("messages sent to a queue and acked: each a message in the queue's workspace, sent, then processed, completed", async () => {
    await publish("orders", [
      { id: "order-1", body: "one" },
      { id: "order-2", body: "two" },
    ]);
    const consumer = run("amqpConsumer.cjs", ["orders"]);
    await waitForLine(consumer, "acked order-2\n");
    consumer.kill("SIGTERM");
    expect(await waitForExit(consumer)).toBe(0);
    const rows = await messagesOf("orders", (items) => items.length === 2 && items.every((item) => item.state === "completed"));
    expect(rows.map((row) => row.workspace)).toEqual(["orders", "orders"]);
    const steps = await stepsOf(rows[0]!);
    expect(steps).toEqual([expect.stringMatching(/^send: into orders, \d+(\.\d+)? m?s$/), expect.stringMatching(/^process: done, \d+(\.\d+)? m?s$/)]);
  }, 120_000);

  it("nacked and requeued, then acked on its redelivery: completed, the nack in its history", async () => {
    await publish("refunds", [{ id: "refund-1", body: "nack once" }]);
    const consumer = run("amqpConsumer.cjs", ["refunds"]);
    // A whole line: "requeued refund-1" is not it.
    await waitForLine(consumer, "\nacked refund-1\n");
    expect(consumer.output()).toContain("requeued refund-1");
    consumer.kill("SIGTERM");
    expect(await waitForExit(consumer)).toBe(0);
    const [row] = await messagesOf("refunds", (items) => items[0]?.state === "completed");
    const steps = await stepsOf(row!);
    expect(steps).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^process: failed: nack called on message with requeue \(back in the queue\), \d+(\.\d+)? m?s$/),
        expect.stringMatching(/^process: done, \d+(\.\d+)? m?s$/),
      ]),
    );
    // Over MCP: completed, no error left; the nacked delivery failed with its reason, the redelivery done.
    expect((await receivedOverMcp.rows(await mcp(), { workspace: "refunds" })).items).toEqual([
      expect.objectContaining({ requestId: row!.requestId, state: "completed" }),
    ]);
    const message = await receivedOverMcp.lifecycle(await mcp(), row!.requestId);
    expect(message.request.error).toBeUndefined();
    const processed = timelineOutline(message)
      .map((line) => line.trim())
      .filter((line) => line.startsWith("process, "));
    expect(processed).toEqual([expect.stringMatching(/, failed: nack called on message with requeue$/), expect.stringMatching(/^process, \d+(\.\d+)? m?s$/)]);
    expect(await receivedOverMcp.story(await mcp(), row!.requestId)).not.toContain("Error:");
  }, 120_000);
});
