import { expect, test } from "./fixtures";
import { runCli } from "../helpers/cli";

test("the sessions list and a session's context, with a command recorded by another process appearing live", async ({ page, tracker, stateDir }) => {
  const started = tracker.sessions.start();
  if (!started.ok) throw new Error(started.error.message);
  const id = started.value.session.session_id;
  tracker.sessions.recordCommand({ command: "add authentication to API", workflow: "complete_system", durationSeconds: 420, status: "completed" });
  tracker.sessions.recordFile({ path: "src/auth/middleware.ts", summary: "Added JWT validation" });
  tracker.sessions.updateSnapshot({
    activeTask: "Building authentication system",
    completedSteps: ["Created auth middleware"],
    nextSteps: ["Add refresh tokens"],
  });
  tracker.create({ requestId: "req-in-session", workspace: "gateway", state: "queued", sessionId: id });

  await page.goto("/sessions");
  const row = page.getByRole("table", { name: "Sessions" }).getByRole("row", { name: new RegExp(id) });
  await expect(row).toContainText("active");
  await expect(row).toContainText("Building authentication system");
  await row.getByRole("link", { name: id }).click();

  await expect(page.getByRole("heading", { level: 1 })).toContainText(id);
  await expect(page.getByLabel("Context")).toContainText("Current focus: Building authentication system");
  await expect(page.getByRole("region", { name: "Next steps" })).toContainText("Add refresh tokens");
  await expect(page.getByRole("table", { name: "Files modified" })).toContainText("src/auth/middleware.ts");
  const commands = page.getByRole("table", { name: "Commands" });
  await expect(commands.getByRole("row")).toHaveCount(2);

  // Another process (the CLI, as a hook would run it) records a command: it appears without a reload.
  const cli = runCli(["session", "command", "fix login endpoint bug", "--status", "partial", "--workflow", "orchestrated", "--duration", "180"], { stateDir });
  expect(cli.code).toBe(0);
  await expect(commands.getByRole("row", { name: /fix login endpoint bug/ })).toContainText("partial");
  await expect(page.getByRole("region", { name: "Patterns and workflows" })).toContainText("orchestrated (1)");

  // Its requests, in the same table as the requests page; a request leads back to the session.
  const requests = page.getByRole("table", { name: "Session requests" });
  await expect(requests.getByRole("row", { name: /req-in-session/ })).toBeVisible();
  tracker.create({ requestId: "req-live", workspace: "gateway", state: "queued", sessionId: id });
  await expect(requests.getByRole("row", { name: /req-live/ })).toBeVisible();
  await requests.getByRole("link", { name: "req-in-session" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("req-in-session");
  await page.getByRole("link", { name: id, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/sessions/${id}$`));
});

test("an expired session is shown as expired, and a corrupt one is reported in health, never deleted", async ({ page, stateDir, launchApp }) => {
  const fs = await import("node:fs");
  fs.mkdirSync(`${stateDir}/sessions`, { recursive: true });
  fs.writeFileSync(
    `${stateDir}/sessions/old-session.json`,
    JSON.stringify({
      session_id: "old-session",
      created_at: "2025-01-26T09:00:00Z",
      last_updated: "2025-01-26T12:30:00Z",
      context_snapshot: { active_task: "User registration system" },
    }),
  );
  fs.writeFileSync(`${stateDir}/sessions/broken.json`, "{ not json");
  const { url } = await launchApp();
  await page.goto(`${url}/sessions`);
  await expect(page.getByRole("table", { name: "Sessions" }).getByRole("row", { name: /old-session/ })).toContainText("expired");
  await page.goto(`${url}/health`);
  await expect(page.getByRole("table", { name: "Unreadable files" })).toContainText("sessions/broken.json");
  // The corrupt session's own page says why it cannot be shown; a session that does not exist is a 404.
  await page.goto(`${url}/sessions/broken`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Session unreadable");
  await expect(page.getByRole("main")).toContainText("invalid JSON");
  const missing = await page.goto(`${url}/sessions/no-such-session`);
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Session not found");
  await page.getByRole("main").getByRole("link", { name: "All sessions" }).click();
  await expect(page.getByRole("table", { name: "Sessions" }).getByRole("row", { name: /old-session/ })).toBeVisible();
  expect(fs.readFileSync(`${stateDir}/sessions/broken.json`, "utf8")).toBe("{ not json");
});

test("a session's commands and files are listed newest first, as their headings say", async ({ page, stateDir, launchApp }) => {
  const fs = await import("node:fs");
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  fs.mkdirSync(`${stateDir}/sessions`, { recursive: true });
  // Written by another tool, in its own order.
  fs.writeFileSync(
    `${stateDir}/sessions/sorted.json`,
    JSON.stringify({
      session_id: "sorted",
      created_at: at(60),
      last_updated: at(1),
      commands_executed: [
        { timestamp: at(20), command: "middle" },
        { timestamp: at(5), command: "newest" },
        { timestamp: at(40), command: "oldest" },
      ],
      files_modified: { "b.ts": { last_modified: at(30) }, "a.ts": { last_modified: at(2) }, "c.ts": { last_modified: at(50) } },
    }),
  );
  const { url } = await launchApp();
  await page.goto(`${url}/sessions/sorted`);
  await expect(page.getByRole("heading", { name: "Commands (3, newest first)" })).toBeVisible();
  await expect(page.getByRole("table", { name: "Commands" }).getByRole("row")).toContainText(["Command", "newest", "middle", "oldest"]);
  await expect(page.getByRole("heading", { name: "Files modified (3, newest first)" })).toBeVisible();
  await expect(page.getByRole("table", { name: "Files modified" }).getByRole("row")).toContainText(["File", "a.ts", "b.ts", "c.ts"]);
});
