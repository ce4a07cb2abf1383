import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import { anAnthropicMock, type Scenario } from "./anthropicMock";
import { aDashboard } from "./dashboard";
import { anAgent, closeAgents } from "./mcpAgent";
import { eventually, waitForExit } from "./processes";

const ROOT = path.resolve(__dirname, "../..");

/** What an application printed, and how many calls the Messages API mock answered. */
export interface AppRun {
  service: string;
  stdout: string;
  stderr: string;
  calls: number;
}

/**
 * An instrumented application (a script in tests/helpers/workers, with a real client from the npm
 * registry) run against the Messages API mock, its tracer provider exporting over OTLP/HTTP to a
 * real dashboard's receiver that the test file keeps from its first test to its last. The script
 * is called `<script> <receiver> <api url> <service> <client's node_modules> <reqwatch's
 * node_modules> ...args`.
 */
export function instrumentedApps(name: string, install: () => void = () => {}) {
  const app = path.join(ROOT, "tests/helpers/workers", `${name}App.cjs`);
  let dashboard: Awaited<ReturnType<typeof aDashboard>>;
  let receiver: string;
  let parent: string;
  let agent: Awaited<ReturnType<typeof anAgent>> | undefined;
  beforeAll(async () => {
    install();
    parent = fs.mkdtempSync(path.join(os.tmpdir(), `reqwatch-${name}-`));
    dashboard = await aDashboard({ stateDir: path.join(parent, "state") }, { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 }, "file");
    receiver = (await dashboard.runtime.telemetry!.ready).url!;
  }, 600_000);
  afterAll(async () => {
    await closeAgents();
    await dashboard.close();
    fs.rmSync(parent, { recursive: true, force: true });
  });

  /** Run the application once as `service` with its client in `client`, against a mock answering `mock`. */
  async function run(service: string, client: string, mock: Scenario, args: readonly string[]): Promise<AppRun> {
    const api = await anAnthropicMock(mock, { retryAfterMs: 10 });
    try {
      // Not spawnSync: the mock and the receiver answer from this process.
      const child = spawn(process.execPath, [app, receiver, api.url, service, client, path.join(ROOT, "node_modules"), ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      await waitForExit(child);
      return { service, stdout, stderr, calls: api.calls.length };
    } finally {
      await api.close();
    }
  }

  async function rowsOf(service: string): Promise<RequestsView["items"]> {
    const answer = await dashboard.ask(`/api/requests?source=otel&workspace=${service}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.json<RequestsView>().items;
  }

  const pageOf = async (requestId: string) => (await dashboard.ask(`/api/sources/otel/requests/${requestId}`)).json<SourceRequestView>();

  /** The service's lifecycles once `arrived` says what the test waits for is there, and the first one's page. */
  async function lifecyclesOf(service: string, arrived: (items: RequestsView["items"]) => boolean) {
    const rows = await eventually(async () => {
      const items = await rowsOf(service);
      return arrived(items) ? items : undefined;
    }, 20_000);
    return { rows, row: rows[0]!, view: await pageOf(rows[0]!.requestId) };
  }

  /** The service's one lifecycle once the span that holds the rest (its step `name`) has arrived, and its page. */
  async function lifecycleOf(service: string, name: string) {
    return eventually(async () => {
      const items = await rowsOf(service);
      if (items.length !== 1) return undefined;
      const view = await pageOf(items[0]!.requestId);
      return view.steps?.some((step) => step.name === name) ? { row: items[0]!, view } : undefined;
    }, 20_000);
  }

  /** `reqwatch mcp` on the dashboard's state folder, as a coding agent asks it: one for the file. */
  const mcp = async () => (agent ??= await anAgent(path.join(parent, "state")));

  return { run, lifecyclesOf, lifecycleOf, mcp };
}
