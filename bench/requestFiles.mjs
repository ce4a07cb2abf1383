import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { STATES } = require("../dist/index.cjs");

/**
 * Request files written directly (as another tool would), so 100k of them take seconds, not minutes.
 * `mtimeAsUpdated`: each file's modification time is its lastUpdatedAt, as when its writer wrote
 * it at its last update. `states`: the states to cycle through (default all). Returns each request's id and lastUpdatedAt.
 */
export function writeFiles(stateDir, count, now = Date.now(), { mtimeAsUpdated = false, states = STATES } = {}) {
  const dir = path.join(stateDir, "requests");
  fs.mkdirSync(dir, { recursive: true });
  const written = [];
  for (let i = 0; i < count; i++) {
    const state = states[i % states.length];
    // Finished requests spread over a week; live ones recent, so a monitor pass finds a healthy queue.
    const live = state === "queued" || state === "processing";
    const createdAt = live ? now - 60_000 + (i % 50_000) : now - 7 * 86_400_000 + Math.floor((i / count) * 7 * 86_400_000);
    const request = {
      requestId: `r${String(i).padStart(7, "0")}`,
      workspace: `ws${i % 20}`,
      sessionId: `s${i % 500}`,
      chatId: 1000 + (i % 977),
      state,
      createdAt,
      lastUpdatedAt: createdAt + 5000,
      prompt: `${"Summarise the failing tests in the repository and propose a fix. ".repeat(3)}Ticket T${i % 1000}.`,
      model: "sonnet",
      version: 3,
      transitions: [
        { from: null, to: "created", at: createdAt },
        { from: "created", to: "queued", at: createdAt + 1000 },
      ],
    };
    // Everything past queued ran under a claim by one of 8 workers, whose steps name it (the workers page).
    if (state !== "created" && state !== "queued") {
      const worker = { pid: state === "processing" ? process.pid : 100_000 + (i % 8), host: os.hostname() };
      // A failure or time-out came after a failed attempt that was retried: four more steps.
      if (state === "failed" || state === "timeout") {
        request.transitions.push({
          from: "queued",
          to: "processing",
          at: createdAt + 1500,
          by: `worker ${(i + 1) % 8}`,
          token: `t${i}-1`,
          worker: { ...worker, pid: 100_000 + ((i + 1) % 8) },
        });
        request.transitions.push({ from: "processing", to: "queued", at: createdAt + 1700, token: `t${i}-1`, error: "rate limited" });
      }
      request.transitions.push({ from: "queued", to: "processing", at: createdAt + 2000, reason: "claimed", by: `worker ${i % 8}`, token: `t${i}`, worker });
      if (state !== "processing") request.transitions.push({ from: "processing", to: state, at: createdAt + 4000, token: `t${i}` });
    }
    if (state === "processing") {
      request.claim = { token: `t${i}`, pid: process.pid, host: os.hostname(), claimedAt: createdAt + 2000, heartbeatAt: createdAt + 2000 };
      request.processingStartedAt = createdAt + 2000;
    }
    const file = path.join(dir, `${request.requestId}.json`);
    fs.writeFileSync(file, JSON.stringify(request));
    if (mtimeAsUpdated) fs.utimesSync(file, new Date(request.lastUpdatedAt), new Date(request.lastUpdatedAt));
    written.push({ id: request.requestId, updatedAt: request.lastUpdatedAt });
  }
  return written;
}
