import type { Page } from "@playwright/test";
import type { Recording } from "../../lib/tracker";
import type { Tracker } from "../../lib/types";
import { STATES, TERMINAL_STATES, type State } from "../../lib/model/states";
import { expect, test } from "./fixtures";

/**
 * Every figure the dashboard shows in two places, compared on one frozen folder: two workspaces with
 * queued and processing requests past low thresholds, finished ones, and two sessions (one with
 * recorded context, one known only from its requests).
 */
test.use({ appEnv: { REQWATCH_QUEUED_STUCK_AFTER: "1s", REQWATCH_HEARTBEAT_TIMEOUT: "1s", REQWATCH_MONITOR_INTERVAL: "500ms" } });

const RECORDED = "sess-recorded";
const BARE = "sess-bare";

/** One request taken by this process's worker and left processing: silent past the heartbeat timeout, its worker alive. */
function aSilentRequest(tracker: Tracker, requestId: string, workspace: string, sessionId?: string): void {
  tracker.create({ requestId, workspace, state: "queued", ...(sessionId && { sessionId }) });
  const claim = tracker.claimNext({ workspace });
  if (claim?.request.requestId !== requestId) throw new Error(`expected to claim ${requestId}`);
}

function aFinishedRequest(tracker: Tracker, requestId: string, workspace: string, outcome: "completed" | "failed", sessionId?: string): void {
  tracker.create({ requestId, workspace, state: "queued", ...(sessionId && { sessionId }) });
  const claim = tracker.claimNext({ workspace });
  if (claim?.request.requestId !== requestId) throw new Error(`expected to claim ${requestId}`);
  if (outcome === "completed") tracker.complete(requestId, claim.token, { output: "done" });
  else tracker.fail(requestId, claim.token, "model overloaded", { retryable: false });
}

/** The folder: what each workspace holds is named in its ids. */
function seed({ tracker, operator }: Recording): void {
  aFinishedRequest(tracker, "alpha-done-1", "alpha", "completed", RECORDED);
  aFinishedRequest(tracker, "alpha-done-2", "alpha", "completed");
  aFinishedRequest(tracker, "alpha-failed", "alpha", "failed", BARE);
  aSilentRequest(tracker, "alpha-silent", "alpha", RECORDED);
  aFinishedRequest(tracker, "beta-done", "beta", "completed", BARE);
  aSilentRequest(tracker, "beta-silent-1", "beta");
  aSilentRequest(tracker, "beta-silent-2", "beta", BARE);
  // Cancelled: failed without a worker.
  tracker.create({ requestId: "beta-cancelled", workspace: "beta", state: "queued" });
  operator.cancel(["beta-cancelled"]);
  for (const id of ["alpha-waiting-1", "alpha-waiting-2"]) tracker.create({ requestId: id, workspace: "alpha", state: "queued", sessionId: RECORDED });
  for (const id of ["beta-waiting-1", "beta-waiting-2", "beta-waiting-3"]) tracker.create({ requestId: id, workspace: "beta", state: "queued" });
  // A paused queue: its wait is not stuck, but the request a silent worker holds in it is.
  aSilentRequest(tracker, "gamma-silent", "gamma");
  tracker.create({ requestId: "gamma-held", workspace: "gamma", state: "queued" });
  operator.pause("gamma", { by: "ops", reason: "deploy" });
  tracker.sessions.updateSnapshot({ activeTask: "Compare the figures", nextSteps: ["Open each pair"], blockingIssues: [] }, RECORDED);
  tracker.sessions.recordCommand({ command: "npm test", workflow: "testing", status: "completed", durationSeconds: 3 }, RECORDED);
  tracker.sessions.recordFile({ path: "tests/e2e/figurePairs.spec.ts", summary: "written" }, RECORDED);
}

const STUCK = 2 + 3 + 4; // queued past the threshold in the two running queues, and the four silent ones

/** The rows a table page lists, once it has loaded (every set here fits its first page). */
async function rowsListed(page: Page, url: string, table = "Requests"): Promise<string[]> {
  await page.goto(url);
  const rows = page
    .getByRole("table", { name: table })
    .getByRole("row")
    .filter({ has: page.getByRole("cell") });
  await expect(rows.or(page.getByText("No requests match these filters."))).not.toHaveCount(0);
  return (await rows.evaluateAll((found) => found.map((row) => (row as HTMLElement).dataset.requestId ?? ""))).sort();
}

const figure = async (text: Promise<string | null>) => Number((await text)?.trim());

async function overviewCounts(page: Page): Promise<Record<State, number>> {
  const counts = {} as Record<State, number>;
  for (const state of STATES)
    counts[state] = await figure(
      page
        .getByRole("list", { name: "Requests by state" })
        .getByRole("listitem", { name: new RegExp(`^${state}: `) })
        .locator(".n")
        .textContent(),
    );
  return counts;
}

/** The overview's queues table, by workspace: its queued, processing and stuck (from the status's words). */
async function queueRows(page: Page): Promise<Map<string, { queued: number; processing: number; stuck: number }>> {
  const rows = new Map<string, { queued: number; processing: number; stuck: number }>();
  for (const row of await page
    .getByRole("table", { name: "Queues" })
    .getByRole("row")
    .filter({ has: page.getByRole("cell") })
    .all()) {
    const cells = await row.getByRole("cell").allTextContents();
    const stuck = [...(cells[4] ?? "").matchAll(/(\d+) of \d+ (?:processing|queued)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    rows.set(cells[0]!, { queued: Number(cells[1]), processing: Number(cells[2]), stuck });
  }
  return rows;
}

test("each figure shown twice shows the same number in both places, on a frozen folder", async ({ page, recording }) => {
  seed(recording);
  // Once the monitor has flagged all of them (nothing moves after), every place counts the same list.
  await page.goto("/health");
  const badge = page.getByRole("link", { name: /^\d+ stuck$/ });
  await expect(badge).toHaveText(`${STUCK} stuck`);

  // The header's badge, Health, the overview's queues and the table the badge links to.
  await expect(page.getByLabel("Stuck count")).toHaveText(String(STUCK));
  const indexed = await figure(
    page
      .locator("dt", { hasText: /^Requests indexed$/ })
      .locator("+ dd")
      .textContent(),
  );

  await page.goto("/");
  await expect(page.getByRole("link", { name: /^\d+ stuck$/ })).toHaveText(`${STUCK} stuck`);
  const counts = await overviewCounts(page);
  const queues = await queueRows(page);
  expect([...queues.keys()]).toEqual(["alpha", "beta", "gamma"]);
  expect([...queues.values()].reduce((sum, row) => sum + row.stuck, 0)).toBe(STUCK);
  // The queues' waiting and running work is the counts' queued and processing.
  expect([...queues.values()].reduce((sum, row) => sum + row.queued, 0)).toBe(counts.queued);
  expect([...queues.values()].reduce((sum, row) => sum + row.processing, 0)).toBe(counts.processing);
  // The chart of requests by state ends at the counts.
  await expect(page.getByLabel("Requests by state at the point shown")).toHaveText(
    new RegExp(`^now \\(.+\\): queued ${counts.queued}, processing ${counts.processing}, created ${counts.created}$`),
  );
  // Health's requests indexed is every state's count.
  expect(indexed).toBe(STATES.reduce((sum, state) => sum + counts[state], 0));
  // Everything here finished within the hour: the last hour's finished is the finished states' counts.
  const finished = (await page.getByRole("region", { name: "Last hour" }).locator("p").first().textContent()) ?? "";
  expect(finished).toContain(`${TERMINAL_STATES.reduce((sum, state) => sum + counts[state], 0)} requests finished`);
  for (const state of TERMINAL_STATES) if (counts[state]) expect(finished).toContain(`${counts[state]} ${state}`);

  await page.getByRole("link", { name: `${STUCK} stuck` }).click();
  await expect(page).toHaveURL(/\/requests\?stuck=1$/);
  expect(await rowsListed(page, "/requests?stuck=1")).toHaveLength(STUCK);
  // Each queue links to its requests, and its stuck words to its stuck ones.
  for (const [workspace, row] of queues) {
    expect(await rowsListed(page, `/requests?workspace=${workspace}&states=queued,processing`)).toHaveLength(row.queued + row.processing);
    expect(await rowsListed(page, `/requests?states=queued,processing&stuck=1&workspace=${workspace}`)).toHaveLength(row.stuck);
  }

  // The overview's count per state is the requests page filtered by that state.
  for (const state of STATES) expect.soft(await rowsListed(page, `/requests?states=${state}`), state).toHaveLength(counts[state]);

  // Workers: what they hold is what the queues say is processing (every processing request here is under a claim).
  await page.goto("/workers");
  const holding = await page
    .getByRole("table", { name: "Workers" })
    .getByRole("row")
    .filter({ has: page.getByRole("cell") })
    .evaluateAll((rows) => rows.reduce((sum, row) => sum + Number(row.querySelectorAll("td")[3]?.textContent), 0));
  expect(holding).toBe(counts.processing);

  // A session's figures on the sessions list are its page's.
  await page.goto("/sessions");
  const listed = new Map<string, { commands: number; files: number; requests: number }>();
  for (const row of await page
    .getByRole("table", { name: "Sessions" })
    .getByRole("row")
    .filter({ has: page.getByRole("cell") })
    .all()) {
    const cells = await row.getByRole("cell").allTextContents();
    // Session, From, State, Last activity, Active task, Requests, Did ("N commands, M files"), ...
    const did = /^(\d+) commands?, (\d+) files?$/.exec(cells[6]!.trim());
    expect(did, `the Did cell of ${cells[0]}: ${cells[6]}`).not.toBeNull();
    listed.set(cells[0]!, { commands: Number(did![1]), files: Number(did![2]), requests: Number(cells[5]) });
  }
  expect([...listed.keys()].sort()).toEqual([BARE, RECORDED]);
  for (const [sessionId, row] of listed) {
    const ids = await rowsListed(page, `/sessions/${sessionId}`, "Session requests");
    expect(ids).toHaveLength(row.requests);
    await expect(page.getByLabel("Requests seen")).toContainText(`${row.requests} request${row.requests === 1 ? "" : "s"} carry this id`);
    await expect(page.getByRole("heading", { name: /^Requests \(/ })).toHaveText(new RegExp(`^Requests \\(${row.requests}\\b`));
    if (sessionId === RECORDED) {
      await expect(page.getByRole("heading", { name: /^Commands \(/ })).toHaveText(`Commands (${row.commands})`);
      await expect(page.getByRole("heading", { name: /^Files modified \(/ })).toHaveText(`Files modified (${row.files})`);
    }
    // And its requests page, filtered by the session.
    expect(await rowsListed(page, `/requests?session=${sessionId}`)).toEqual(ids);
  }
});
