import os from "node:os";
import { aClaimedRequest, writeRequestFile } from "../helpers/builders";
import { aDeadPid } from "../helpers/processes";
import { expect, test } from "./fixtures";

test("the workers page: a live worker with what it holds and did, and a gone one that links to the request it left", async ({ page, tracker, stateDir }) => {
  const dead = aDeadPid();
  writeRequestFile(
    stateDir,
    aClaimedRequest(
      "left-behind",
      { token: "t-dead", pid: dead, host: os.hostname(), claimedAt: Date.now() - 60_000, heartbeatAt: Date.now() - 60_000 },
      { workspace: "gw" },
    ),
  );
  for (const id of ["one", "two"]) tracker.create({ requestId: id, workspace: "gw", state: "queued" });
  const done = tracker.claimNext({ worker: "test-worker" })!;
  tracker.complete(done.request.requestId, done.token);

  await page.goto("/");
  await page.getByRole("link", { name: "Workers" }).click();
  const table = page.getByRole("table", { name: "Workers" });
  const row = (text: string | RegExp) => table.getByRole("row").filter({ hasText: text });
  await expect(row("test-worker")).toContainText(`pid ${process.pid}`);
  await expect(row("test-worker")).toContainText("alive");
  await expect(row("test-worker").getByRole("cell").nth(5)).toHaveText("1");

  // Live: a claim made now shows as held.
  tracker.claimNext({ worker: "test-worker" });
  await expect(row("test-worker").getByRole("cell").nth(3)).toHaveText("1");

  const gone = row(`pid ${dead}`);
  await expect(gone).toContainText("gone");
  await expect(gone).toContainText("no process");
  await gone.getByRole("link", { name: "left-behind" }).click();
  await expect(page).toHaveURL(/\/requests\/left-behind$/);
});
