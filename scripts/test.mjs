// `npm test`: every test. First what the tests need from the machine (said in one line with the
// command that installs it, before anything runs), the typecheck, the lint and the build; then both
// halves, vitest (unit and integration) and Playwright (the pages in Chromium), side by side: they
// wait on processes, clients and browsers more than on the CPU. Both always run to the end; the exit
// code is the first failing half's. Playwright's report follows vitest's (and is in its log as it runs).
import "./lib/supportedNode.mjs";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./build-if-stale.mjs";
import { runHalves } from "./lib/halves.mjs";

const CHROMIUM = process.env.REQWATCH_CHROMIUM ?? "/usr/bin/chromium";
// What tests start as real programs, and the Debian package each comes from.
const NEEDED = [
  { what: "Chromium (the Playwright specs)", found: () => isExecutable(CHROMIUM), apt: "chromium" },
  { what: "jq (a gateway's stop hook, run as written)", found: () => onPath("jq"), apt: "jq" },
  { what: "Redis (the BullMQ tests)", found: () => onPath("redis-server"), apt: "redis-server" },
  { what: "RabbitMQ (the amqplib tests)", found: () => isExecutable("/usr/lib/rabbitmq/bin/rabbitmq-server"), apt: "rabbitmq-server" },
];

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command) {
  return (process.env.PATH ?? "").split(path.delimiter).some((dir) => dir && isExecutable(path.join(dir, command)));
}

const missing = NEEDED.filter((need) => !need.found());
if (missing.length > 0) {
  console.error(
    `npm test needs ${missing.map((need) => need.what).join(", ")}: sudo apt-get install ${missing.map((need) => need.apt).join(" ")}` +
      (missing.some((need) => need.apt === "chromium") ? ` (or set REQWATCH_CHROMIUM to a Chromium of your own)` : "") +
      `; .ci/run installs them and runs the tests`,
  );
  process.exit(2);
}

const npx = (args) => spawnSync("npx", args, { cwd: ROOT, stdio: "inherit" }).status ?? 1;
for (const step of [
  ["tsc", "--noEmit", "-p", "tsconfig.json"],
  ["eslint", "."],
  ["prettier", "--check", "--log-level", "warn", "."],
]) {
  const status = npx(step);
  if (status !== 0) process.exit(status);
}
const built = spawnSync(process.execPath, [path.join(ROOT, "scripts", "build-if-stale.mjs")], { cwd: ROOT, stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);

const playwrightLog = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-npm-test-")), "playwright.log");
console.log(`npm test: vitest here, Playwright beside it (its report follows; as it runs: ${playwrightLog})`);
process.exit(
  await runHalves(
    [
      { name: "vitest", command: "npx", args: ["vitest", "run"] },
      { name: "Playwright", command: "npx", args: ["playwright", "test"], log: playwrightLog },
    ],
    { cwd: ROOT },
  ),
);
