import path from "node:path";
import { freePort } from "../helpers/processes";
import { recordedExports, sendExports } from "../helpers/recordedExports";
import { expect, test } from "./fixtures";

// Two dashboards of one user on two state folders (the test's cache folder is theirs to share):
// one receiver, and the second's pages show what the first received; the first killed, the second
// receives. Claude Code's own exports (tests/fixtures/otlp), their times moved to now.
const FIXTURES = path.resolve(__dirname, "../fixtures/otlp/claude-code-2.1.332");
const SESSION = "09c50f3d-627c-46e9-84ea-8248d62ab9c1";

test("a second dashboard shows the session sent to the first, says which receives, and receives once the first is killed", async ({
  page,
  launchApp,
  stateDir,
}) => {
  const otlpPort = await freePort();
  const receiver = `http://127.0.0.1:${otlpPort}`;
  const first = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort) });
  const second = await launchApp({ REQWATCH_OTLP_PORT: String(otlpPort), REQWATCH_STATE_DIR: path.join(path.dirname(stateDir), "second-folder") });

  await sendExports(receiver, recordedExports(path.join(FIXTURES, "plain")));
  await page.goto(`${second.url}/sessions/${SESSION}?source=otel`);
  await expect(page.getByRole("table", { name: "Session requests" }).getByRole("row").filter({ hasText: "turn-" })).toContainText("1 model call");

  await page.goto(`${second.url}/health`);
  await expect(page.getByRole("definition").filter({ hasText: "OTLP/HTTP on" })).toContainText(receiver);
  await expect(page.getByRole("definition").filter({ hasText: "another dashboard of yours" })).toContainText(
    /^another dashboard of yours \(pid \d+\); this one reads the same store, and receives if that one stops$/,
  );

  // The receiving dashboard dies: the second takes the receiver over, on the same port.
  await first.kill();
  await expect(async () => {
    await page.reload();
    await expect(page.getByRole("definition").filter({ hasText: "this dashboard (pid" })).toHaveCount(1, { timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  await sendExports(receiver, recordedExports(path.join(FIXTURES, "tool-protobuf")));
  await page.goto(`${second.url}/requests?source=otel`);
  await expect(page.getByRole("table", { name: "Requests" }).getByRole("row").filter({ hasText: "claude-code" })).toHaveCount(2);
});
