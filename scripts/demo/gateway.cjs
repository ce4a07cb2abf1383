// The demo's simulated gateway: records requests across a few workspaces and sessions, as an
// agent gateway would, at a few per second. Workspace "nightly" has no worker, so its requests sit
// in the queue until the stuck monitor flags them.
const { openTracker } = require("../../dist/index.cjs");

const tracker = openTracker({ stateDir: process.argv[2], recover: false });
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
let n = 0;

function tick() {
  const workspace = pick(WORKSPACES);
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
}

const timer = setInterval(tick, 350);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    clearInterval(timer);
    tracker.close();
    process.exit(0);
  });
}
