import { spawnSync } from "node:child_process";
import path from "node:path";
import { makeGatewayFolder, uuidv7, writeGatewayRequest, writeGatewayResponse, type GatewayRequest } from "../helpers/gatewayFolder";
import { treeSnapshot } from "../helpers/treeSnapshot";
import { expect, test } from "./fixtures";

const BIN = path.resolve(__dirname, "../../bin/reqwatch.js");
const LOOK_FOR_MS = 60_000;

function cli(args: string[], stateDir: string, cacheDir: string) {
  const result = spawnSync(process.execPath, [BIN, "--state-dir", stateDir, ...args], {
    encoding: "utf8",
    env: { ...process.env, REQWATCH_CACHE_DIR: cacheDir },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("a gateway's data folder, watched for a minute with every page and every reading command, stays byte-identical; its stuck processing requests show as stuck with their reason", async ({
  page,
  stateDir,
  launchApp,
}) => {
  test.setTimeout(180_000);
  const parent = path.dirname(stateDir);
  const cacheDir = path.join(parent, "cache");
  const gateway = makeGatewayFolder(path.join(parent, "gateway"), { count: 200, stuckProcessing: 5 });
  const before = treeSnapshot(gateway.data);
  const stuckProcessing = gateway.requests.filter((r) => r.state === "processing");
  // The last response file is a stop hook cut short: unreadable, so not counted as a failed callback.
  const broken = gateway.responses.at(-1)!;
  const failedCallbacks = gateway.responses.filter((r) => !r.callback.success && r !== broken);
  const byState = (state: string) => gateway.requests.filter((r) => r.state === state).length;
  // Every queued request has waited past the 10-minute threshold with no reqwatch worker to claim it.
  const stuck = stuckProcessing.length + byState("queued");

  const { url } = await launchApp({ REQWATCH_STATE_DIR: gateway.state, REQWATCH_MONITOR_INTERVAL: "1s", REQWATCH_HEARTBEAT_TIMEOUT: "1s" });
  const started = Date.now();

  await page.goto(url);
  await expect(page.getByRole("note", { name: "Access" })).toContainText("observing, read-only (reqwatch did not create this folder)");
  await expect(page.getByRole("note", { name: "Observing read-only" })).toContainText(`To allow actions, run \`reqwatch adopt --state-dir ${gateway.state}\``);
  // Its finished requests are days old: the monitor's retention leaves another program's folder alone.
  await expect(page.getByLabel("Retention")).toContainText("Retention: off, the folder is observed, read-only: reqwatch removes nothing there.");
  const counts = page.getByRole("list", { name: "Requests by state" });
  for (const state of ["queued", "processing", "completed", "failed"]) {
    await expect(counts.getByRole("listitem", { name: `${state}: ${byState(state)}` })).toBeVisible();
  }
  await expect(page.getByRole("link", { name: `${stuck} stuck`, exact: true })).toBeVisible();
  // A queue whose processing requests are stuck says so and why, not running, and links to them.
  const stuckIn = new Map<string, number>();
  for (const request of stuckProcessing) stuckIn.set(request.workspace, (stuckIn.get(request.workspace) ?? 0) + 1);
  const queues = page.getByRole("table", { name: "Queues" });
  for (const [workspace, count] of stuckIn) {
    await expect(queues.getByRole("row", { name: new RegExp(`^${workspace} `) })).toContainText(`stuck: ${count} of ${count} processing (no worker holds it)`);
  }
  const [firstWorkspace, firstCount] = [...stuckIn][0]!;
  await queues
    .getByRole("row", { name: new RegExp(`^${firstWorkspace} `) })
    .getByRole("link", { name: /^stuck:/ })
    .click();
  const queuedIn = gateway.requests.filter((r) => r.state === "queued" && r.workspace === firstWorkspace).length;
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row")).toHaveCount(firstCount + queuedIn + 1);
  await page.goto(url);
  // The gateway's files have no history: queue wait and processing time come from their lifecycle times.
  const finishedLastHour = gateway.requests.filter((r) => r.completedAt !== undefined && r.completedAt >= started - 3_600_000).length;
  expect(finishedLastHour).toBeGreaterThan(0);
  for (const row of ["Queue wait", "Processing"]) {
    await expect(
      page
        .getByRole("table", { name: "Latency" })
        .getByRole("row", { name: new RegExp(row) })
        .getByRole("cell")
        .last(),
    ).toHaveText(String(finishedLastHour));
  }

  // Every action is off, and says how to allow it.
  await page.goto(`${url}/requests?states=processing`);
  const table = page.getByRole("table", { name: "Requests" });
  for (const request of stuckProcessing) {
    const hours = Math.floor((Date.now() - request.processingStartedAt!) / 3_600_000);
    await expect(table.getByRole("row", { name: new RegExp(request.requestId) })).toContainText(`stuck: processing ${hours}h`);
    await expect(table.getByRole("row", { name: new RegExp(request.requestId) })).toContainText("no reqwatch worker holds it (written by another program)");
  }
  for (const name of ["Retry all matching", "Clean up…", `Retry ${stuckProcessing[0]!.requestId}`]) {
    const button = page.getByRole("button", { name });
    await expect(button).toBeDisabled();
    await expect(button).toHaveAttribute("title", /reqwatch adopt --state-dir/);
  }
  // The gateway's response files: the table filters on a failed callback, a request page shows its response.
  await page.goto(`${url}/requests`);
  await page.getByRole("checkbox", { name: "Callback failed" }).check();
  await expect(page).toHaveURL(/callback=failed/);
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row")).toHaveCount(failedCallbacks.length + 1);
  const failedOne = failedCallbacks[0]!;
  await page.goto(`${url}/requests/${failedOne.requestId}`);
  const response = page.getByRole("region", { name: "Response file" });
  await expect(response).toContainText(`../ipc/${failedOne.workspace}/responses/${failedOne.requestId}.json`);
  await expect(response.getByRole("definition").nth(2)).toHaveText("no");
  await expect(response).toContainText("chat service answered 502");
  // The request file has no callback of its own: the page points to the response file, not "No callback".
  await expect(page.getByText("Not in the request file: the gateway's response file (below) records its delivery.")).toBeVisible();
  await page.goto(`${url}/requests/${broken.requestId}`);
  await expect(page.getByRole("region", { name: "Response file" }).getByRole("alert")).toContainText(
    "The response file cannot be read: invalid JSON (a write cut short?)",
  );

  await page.goto(`${url}/requests/${stuckProcessing[0]!.requestId}`);
  await expect(page.getByRole("region", { name: "Response file" })).toContainText("No response file (yet)");
  await expect(page.getByRole("alert").filter({ hasText: "Stuck:" })).toContainText("no reqwatch worker holds it (written by another program)");
  await expect(page.getByRole("button", { name: "Retry" })).toBeDisabled();

  // Reading commands, while the server runs.
  const readers = [
    ["list"],
    ["list", "--json"],
    ["list", "--callback-failed"],
    ["get", stuckProcessing[0]!.requestId],
    ["monitor", "--once"],
    ["cleanup", "--dry-run"],
    ["retry", "--state", "failed", "--dry-run"],
    ["cancel", stuckProcessing[0]!.requestId, "--dry-run"],
    ["session", "list"],
    ["explain", stuckProcessing[0]!.requestId],
    ["queues"],
  ];
  for (const args of readers) {
    const result = cli(args, gateway.state, cacheDir);
    expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
  }
  // There is no session to show: an error, and still nothing written.
  expect(cli(["session", "show"], gateway.state, cacheDir)).toMatchObject({
    code: 1,
    stderr: "reqwatch: There is no current session recorded in this folder.\n",
  });
  expect(cli(["list", "--callback-failed"], gateway.state, cacheDir).stdout.trim().split("\n")).toHaveLength(failedCallbacks.length + 1);
  expect(cli(["monitor", "--once"], gateway.state, cacheDir).stdout).toContain(`stuck ${stuck}`);
  expect(cli(["queues"], gateway.state, cacheDir).stdout).toContain(
    `stuck: ${stuckIn.get(firstWorkspace)} of ${stuckIn.get(firstWorkspace)} processing (no worker holds it), `,
  );
  // The queues' stuck counts are the header's, split by workspace: their queued requests are in them too.
  const queueRows = JSON.parse(cli(["queues", "--json"], gateway.state, cacheDir).stdout) as { stuck: number }[];
  expect(queueRows.reduce((sum, row) => sum + row.stuck, 0)).toBe(stuck);

  // Not only the buttons: the API refuses a change sent with the page's own action token (its dry
  // run answers, as the CLI's does, and says the run would be refused).
  const token = /actionToken\\?"\s*:\s*\\?"([A-Za-z0-9_-]{20,})/.exec(await (await page.request.get(url)).text())?.[1];
  expect(token, "the page carries its action token").toBeTruthy();
  const headers = { Origin: url, "x-reqwatch-token": token! };
  for (const data of [
    { kind: "retry", ids: [stuckProcessing[0]!.requestId] },
    { kind: "cancel", ids: [stuckProcessing[1]!.requestId] },
    { kind: "cleanup", olderThanMs: 0 },
  ]) {
    const dryRun = await page.request.post(`${url}/api/actions/dry-run`, { data, headers });
    expect(dryRun.status(), `dry run ${data.kind}`).toBe(200);
    const refused = await page.request.post(`${url}/api/actions`, {
      data: { ...data, dryRunId: ((await dryRun.json()) as { dryRunId: string }).dryRunId },
      headers,
    });
    expect(refused.status(), `run ${data.kind}`).toBe(403);
    expect((await refused.json()).error.code).toBe("READ_ONLY");
  }

  // A minute of looking, with the monitor passing every second (the pause between pages only paces the looking).
  const pages = ["/", "/requests", "/requests?stuck=1", `/requests/${gateway.requests[50]!.requestId}`, "/sessions", "/audit", "/health"];
  for (let i = 0; Date.now() - started < LOOK_FOR_MS; i++) {
    const response = await page.goto(`${url}${pages[i % pages.length]}`);
    expect(response?.status()).toBe(200);
    await page.waitForTimeout(500);
  }
  // The monitor still passes: one ends after the looking did, error-free.
  const lookedUntil = Date.now();
  const health = async () => (await page.request.get(`${url}/api/health`)).json();
  await expect.poll(async () => (await health()).monitor.lastPassAt, { timeout: 30_000 }).toBeGreaterThan(lookedUntil);
  expect((await health()).monitor.lastError).toBeNull();
  expect(await health()).toMatchObject({ access: "observed", requests: gateway.requests.length });

  expect(treeSnapshot(gateway.data)).toEqual(before);
});

test("a gateway's response files are followed live: a new workspace folder, a file replaced by rename", async ({ page, stateDir, launchApp }) => {
  const gateway = makeGatewayFolder(path.join(path.dirname(stateDir), "gateway"), { count: 20, stuckProcessing: 1 });
  const { url } = await launchApp({ REQWATCH_STATE_DIR: gateway.state });
  const now = Date.now();
  const late: GatewayRequest = {
    requestId: uuidv7(now),
    chatId: 7,
    workspace: "later",
    state: "processing",
    previousState: "queued",
    createdAt: now - 3000,
    queuedAt: now - 2000,
    processingStartedAt: now - 1000,
    lastUpdatedAt: now - 1000,
    prompt: "late one",
    timedOut: false,
  };
  writeGatewayRequest(gateway, late);
  // The watcher takes it in within milliseconds; the page is opened once it has.
  await expect.poll(async () => (await page.request.get(`${url}/api/requests/${late.requestId}`)).status()).toBe(200);
  await page.goto(`${url}/requests/${late.requestId}`);
  const response = page.getByRole("region", { name: "Response file" });
  await expect(response).toContainText("No response file (yet)");
  await expect.poll(async () => (await (await page.request.get(`${url}/api/health`)).json()).ingest.responses.ready).toBe(true);

  writeGatewayResponse(gateway, {
    requestId: late.requestId,
    chatId: 7,
    workspace: "later",
    timestamp: new Date().toISOString(),
    output: "the late answer",
    exitCode: 0,
    callback: { success: false, attempts: 1, retryTimestamps: [], error: "timeout" },
  });
  await expect(response).toContainText("the late answer");
  await expect(response).toContainText("timeout");
  writeGatewayResponse(gateway, {
    requestId: late.requestId,
    chatId: 7,
    workspace: "later",
    timestamp: new Date().toISOString(),
    output: "the late answer",
    exitCode: 0,
    callback: { success: true, attempts: 2, retryTimestamps: [] },
  });
  await expect(response.getByRole("definition").nth(2)).toHaveText("yes");
});
