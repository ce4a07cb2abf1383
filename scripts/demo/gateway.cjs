// The demo's simulated gateway: records requests across a few workspaces and sessions, as an
// agent gateway would, at a few per second, and each session's context (its task, next steps,
// blockers, commands and files), as an agent's hooks would. Workspace "nightly" has no worker, so
// its requests sit in the queue until the stuck monitor flags them; it is given a few at most, so
// the stuck count stays a number that means something.
const { openRoles } = require("../../dist/internal.cjs");

const { tracker, reader } = openRoles({ stateDir: process.argv[2], recover: false });
const WORKSPACES = ["gateway-eu", "gateway-eu", "gateway-us", "gateway-us", "batch", "nightly"];
const MODELS = ["claude-sonnet", "claude-opus", "claude-haiku"];
const PROMPTS = [
  "Summarise the failing tests in packages/api and propose a fix",
  "Refactor the retry loop in worker.ts to use exponential back-off",
  "Write a migration that adds an index on requests(updated_at)",
  "Explain why the websocket reconnect storms after a deploy",
  "Draft release notes for v2.3 from the merged pull requests",
  "Find where the session token leaks into the logs <script>alert('not run')</script>",
];
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const sessions = Array.from({ length: 5 }, (_, i) => `sess-${Date.now().toString(36)}-${i}`);
const NIGHTLY_AT_MOST = 6;
const TASKS = [
  { activeTask: "Fix the flaky retry test in packages/api", nextSteps: ["Pin the clock in the test", "Run the suite twice"], blockingIssues: [] },
  {
    activeTask: "Add an index on requests(updated_at)",
    nextSteps: ["Write the migration", "Measure the list query"],
    blockingIssues: ["Staging database is read-only until 18:00"],
  },
  { activeTask: "Stop the websocket reconnect storm", nextSteps: ["Add jitter to the back-off"], blockingIssues: [] },
  { activeTask: "Draft the v2.3 release notes", nextSteps: ["Collect merged pull requests", "Ask for review"], blockingIssues: [] },
  {
    activeTask: "Find where the session token leaks into the logs",
    nextSteps: ["Grep the request logger"],
    blockingIssues: ["Need access to production logs"],
  },
];
const COMMANDS = [
  { command: "npm test -- packages/api", workflow: "testing", status: "failed" },
  { command: "npm test -- packages/api", workflow: "testing", status: "completed" },
  { command: "git diff --stat", workflow: "review", status: "completed" },
  { command: "npm run build", workflow: "build", status: "completed" },
];
const FILES = [
  "packages/api/src/retry.ts",
  "packages/api/test/retry.test.ts",
  "migrations/0042_requests_updated_at.sql",
  "src/ws/reconnect.ts",
  "CHANGELOG.md",
];
sessions.forEach((sessionId, i) => {
  tracker.sessions.updateSnapshot(TASKS[i], sessionId);
  tracker.sessions.recordFile({ path: FILES[i], summary: "opened to read" }, sessionId);
});
let n = 0;

/** Now and then, what an agent's hooks record into one of the sessions. */
function recordContext() {
  const sessionId = pick(sessions);
  if (Math.random() < 0.5) tracker.sessions.recordCommand({ ...pick(COMMANDS), durationSeconds: 1 + Math.floor(Math.random() * 40) }, sessionId);
  else tracker.sessions.recordFile({ path: pick(FILES), summary: "edited" }, sessionId);
}

function tick() {
  let workspace = pick(WORKSPACES);
  if (workspace === "nightly" && (reader.queueStats().find((queue) => queue.workspace === "nightly")?.queued ?? 0) >= NIGHTLY_AT_MOST) workspace = "batch";
  const hang = Math.random() < 0.05;
  tracker.create({
    workspace,
    state: "queued",
    sessionId: pick(sessions),
    chatId: 1000 + (n % 7),
    model: pick(MODELS),
    prompt: `${pick(PROMPTS)} (#${++n})`,
    // A few carry a short deadline; the workers sometimes hang on them, and the monitor times them out.
    ...(hang && { timeoutAt: Date.now() + 15_000, maxAttempts: 1 }),
  });
  if (n % 5 === 0) recordContext();
}

const timer = setInterval(tick, 350);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    clearInterval(timer);
    tracker.close();
    process.exit(0);
  });
}
