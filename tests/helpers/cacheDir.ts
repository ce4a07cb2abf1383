import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

// The indexes of observed folders go under a cache folder of each test file's own, never the user's
// ~/.cache (child processes inherit it through the environment).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-cache-"));
process.env.REQWATCH_CACHE_DIR = dir;
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
