import fs from "node:fs";
import path from "node:path";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { expect, test } from "./fixtures";

/**
 * Markup and script in every text a request or session can carry, and in the names and reasons the
 * health page lists. Each payload sets `window.__pwned` (or opens a dialog) if it ever runs.
 */
const PAYLOADS = [
  `<img src=x onerror="window.__pwned=1;alert(1)">`,
  `<script>window.__pwned=2</script>`,
  `"><svg onload="window.__pwned=3">`,
  `javascript:window.__pwned=4`,
  `' onmouseover='window.__pwned=5' x='`,
  `</pre><iframe srcdoc="<script>parent.__pwned=6</script>"></iframe>`,
  `{{constructor.constructor('window.__pwned=7')()}}`,
  `<a href="javascript:window.__pwned=8">click</a>`,
  // Breaking out of the JSON the page streams in a <script> (React's RSC payload).
  `\u2028\u2029</script><script>window.__pwned=9</script><!--`,
  `<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned=10">`,
];
const ALL = PAYLOADS.join(" | ");

function plantHostileData(stateDir: string, now: number): void {
  // A request as a foreign writer would leave it: every free-text field holds the corpus.
  writeRequestFile(stateDir, {
    ...aRequest({ requestId: "hostile", state: "failed", sessionId: "hostile-session" }, now),
    chatId: ALL,
    model: ALL,
    prompt: ALL,
    output: ALL,
    error: ALL,
    exitCode: 1,
    callback: { success: false, attempts: 1, retryTimestamps: [ALL], error: ALL },
    claim: { token: ALL, pid: 4242, host: ALL, claimedAt: now - 500, heartbeatAt: now - 400 },
    transitions: PAYLOADS.map((payload, i) => ({ at: now - 900 + i, from: "queued", to: "processing", by: payload, reason: payload })),
    [ALL]: ALL,
  });
  const session = {
    session_id: "hostile-session",
    created_at: new Date(now - 5000).toISOString(),
    last_updated: new Date(now).toISOString(),
    commands_executed: PAYLOADS.map((payload) => ({
      timestamp: new Date(now - 1000).toISOString(),
      command: payload,
      workflow: payload,
      status: payload,
      duration_seconds: 1,
    })),
    files_modified: Object.fromEntries(
      PAYLOADS.map((payload) => [
        payload,
        { changes_summary: payload, workflows: [payload], modification_count: 1, last_modified: new Date(now).toISOString() },
      ]),
    ),
    patterns_detected: PAYLOADS,
    workflows_used: Object.fromEntries(PAYLOADS.map((payload) => [payload, 1])),
    context_snapshot: { active_task: ALL, completed_steps: PAYLOADS, next_steps: PAYLOADS, key_files: PAYLOADS, blocking_issues: PAYLOADS },
    statistics: { [ALL]: ALL },
  };
  fs.writeFileSync(path.join(stateDir, "sessions/hostile-session.json"), JSON.stringify(session));
  // What the health page lists: a file named with markup, and reasons that quote hostile values.
  fs.writeFileSync(path.join(stateDir, "requests", `<img src=x onerror="window.__pwned=11">.json`), "{}");
  writeRequestFile(stateDir, { ...aRequest({ requestId: "bad-workspace", state: "queued" }, now), workspace: PAYLOADS[0] });
  writeRequestFile(stateDir, { ...aRequest({ requestId: "bad-state", state: "queued" }, now), state: PAYLOADS[1] });
}

test("markup and script in every request and session field, file name and reason is shown as text and runs nothing", async ({ page, stateDir, launchApp }) => {
  test.setTimeout(90_000);
  plantHostileData(stateDir, Date.now());
  const { url } = await launchApp();
  let dialogs = 0;
  page.on("dialog", (dialog) => {
    dialogs++;
    void dialog.dismiss();
  });
  const pages: [string, RegExp][] = [
    [`${url}/`, /Recent failures/],
    [`${url}/requests`, /hostile/],
    [`${url}/requests/hostile`, /Request hostile/],
    [`${url}/sessions`, /hostile-session/],
    [`${url}/sessions/hostile-session`, /hostile-session/],
    [`${url}/health`, /could not be read/],
    [`${url}/audit`, /Audit/],
  ];
  for (const [address, ready] of pages) {
    await page.goto(address);
    await expect(page.locator("main")).toContainText(ready);
    // Hover and open everything a person might, so that event-handler payloads get their chance.
    for (const summary of await page.locator("details:not([open]) > summary").all()) await summary.click();
    await page.mouse.move(200, 300);
    const found = await page.evaluate(() => {
      const elements = [...document.querySelectorAll("*")];
      return {
        pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
        injectedElements: document.querySelectorAll('img[src="x"], svg[onload], iframe, mglyph, main script').length,
        handlerAttributes: elements.flatMap((el) => [...el.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${el.tagName} ${a.name}`)),
        scriptUrls: elements.flatMap((el) => [...el.attributes].filter((a) => /^\s*javascript:/i.test(a.value)).map((a) => `${el.tagName} ${a.name}`)),
      };
    });
    expect(found, address).toEqual({ pwned: null, injectedElements: 0, handlerAttributes: [], scriptUrls: [] });
  }
  // The texts are there, as text.
  await page.goto(`${url}/requests/hostile`);
  await expect(page.getByLabel("Prompt", { exact: true })).toHaveText(ALL);
  await expect(page.getByRole("table", { name: "History" })).toContainText(PAYLOADS[5]!);
  await page.goto(`${url}/sessions/hostile-session`);
  await expect(page.locator("main")).toContainText(PAYLOADS[0]!);
  await page.goto(`${url}/health`);
  await expect(page.getByRole("table", { name: "Unreadable files" })).toContainText(`<img src=x onerror="window.__pwned=11">.json`);
  expect(dialogs).toBe(0);
});
