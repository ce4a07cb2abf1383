import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { plantBadFiles } from "../helpers/badFiles";
import { tempStateDir } from "../helpers/stateDir";

const LIB = path.resolve(__dirname, "../../dist/index.cjs");

/** `count` request files as another program would write them: every state, retried failures, claims by several workers. */
function writeRequests(stateDir: string, count: number): void {
  const states = ["created", "queued", "processing", "completed", "failed", "timeout"] as const;
  const dir = path.join(stateDir, "requests");
  fs.mkdirSync(dir, { recursive: true });
  const start = Date.UTC(2026, 10, 1);
  for (let i = 0; i < count; i++) {
    const state = states[i % states.length]!;
    const createdAt = start + i * 37_000;
    const transitions: Record<string, unknown>[] = [{ from: null, to: "created", at: createdAt }];
    if (state !== "created") transitions.push({ from: "created", to: "queued", at: createdAt + 1000 });
    if (state === "failed" || state === "timeout") {
      transitions.push({ from: "queued", to: "processing", at: createdAt + 1500, token: `t${i}-1`, worker: { pid: 100_000 + (i % 7), host: "h" } });
      transitions.push({ from: "processing", to: "queued", at: createdAt + 1700, token: `t${i}-1`, error: "rate limited" });
    }
    if (state !== "created" && state !== "queued") transitions.push({ from: "queued", to: "processing", at: createdAt + 2000, token: `t${i}`, worker: { pid: 100_000 + (i % 5), host: "h" } });
    if (state !== "created" && state !== "queued" && state !== "processing") transitions.push({ from: "processing", to: state, at: createdAt + 4000 + (i % 90) * 1000, token: `t${i}` });
    const request = { requestId: `r${String(i).padStart(5, "0")}`, workspace: `ws${i % 7}`, sessionId: `s${i % 40}`, state, createdAt, lastUpdatedAt: transitions.at(-1)!.at, prompt: `prompt ${i}`, version: transitions.length, transitions };
    fs.writeFileSync(path.join(dir, `${request.requestId}.json`), JSON.stringify(request));
  }
}

/** Open the tracker in a process of its own, on the bundle (where the reader threads' script is), and return its open report. */
function openInChild(stateDir: string, rebuildThreads: number): { readerThreads: number; scanned: number; unreadable: unknown[] } {
  const script = `const t = require(${JSON.stringify(LIB)}).openTracker({ stateDir: ${JSON.stringify(stateDir)}, recover: false, rebuildThreads: ${rebuildThreads} }); process.stdout.write(JSON.stringify(t.openReport)); t.close();`;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }));
}

/** Everything the index holds that does not depend on when or where it was built. */
function dump(stateDir: string) {
  const db = new Database(path.join(stateDir, "index.db"), { readonly: true });
  try {
    const all = (sql: string) => db.prepare(sql).all();
    return {
      requests: all("SELECT id, workspace, session_id, state, previous_state, created_at, updated_at, state_since, attempt, version, claim_token, last_claimed_at, heartbeat_at, file_size, text_sig, doc FROM requests ORDER BY id"),
      attempts: all("SELECT * FROM attempts ORDER BY request_id, number"),
      transitions: all("SELECT * FROM transitions ORDER BY request_id, seq"),
      activity: all("SELECT * FROM activity ORDER BY span, bucket, workspace, metric, bin"),
      counts: all("SELECT * FROM state_counts ORDER BY state"),
      unreadable: all("SELECT file, reason FROM unreadable_files ORDER BY file"),
      triggers: all("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
    };
  } finally {
    db.close();
  }
}

describe("rebuilding the index from the files", () => {
  it("on reader threads, the index holds exactly what a rebuild on one thread makes, bad files reported the same", () => {
    const threaded = tempStateDir();
    writeRequests(threaded, 3000);
    plantBadFiles(threaded);
    // The same files, byte for byte (the corpus holds a FIFO and a symlink: cp -a keeps them as they are).
    const single = tempStateDir();
    fs.rmSync(single, { recursive: true });
    execFileSync("cp", ["-a", threaded, single]);
    const withThreads = openInChild(threaded, 2);
    const alone = openInChild(single, 0);
    // The threads did read: the comparison below is between two ways of reading, not one way twice.
    expect(withThreads.readerThreads).toBe(2);
    expect(alone.readerThreads).toBe(0);
    expect(withThreads.scanned).toBe(alone.scanned);
    expect(withThreads.unreadable).toEqual(alone.unreadable);
    expect(withThreads.unreadable.length).toBeGreaterThan(10);
    const a = dump(threaded);
    const b = dump(single);
    expect(a.requests).toHaveLength(3003);
    expect(a.transitions.length).toBeGreaterThan(10_000);
    expect(a).toEqual(b);
  }, 60_000);
});
