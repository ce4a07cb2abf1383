import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

// The indexes of observed folders go under a cache folder of each test file's own, never the user's
// ~/.cache (child processes inherit it through the environment).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-cache-"));
process.env.REQWATCH_CACHE_DIR = dir;
// No dashboard a test starts receives OpenTelemetry unless the test asks: 4318 may be the machine's own collector's.
process.env.REQWATCH_OTLP_PORT = "off";
// Each dashboard keeps what it receives beside its own state folder's index, as each test has one:
// a test of the user's one shared store (tests/integration/sharedReceiver.test.ts) names its own folder.
process.env.REQWATCH_TELEMETRY_DIR = "state-folder";
// Nor reads the machine's own ~/.claude: a test that wants Claude Code's files names their folder.
process.env.REQWATCH_AGENT_FILES = "off";
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
