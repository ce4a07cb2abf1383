import fs from "node:fs";
import path from "node:path";

/** `count` request files as another program would write them: every state, retried failures, claims by several workers; r00000 is the oldest. */
export function writeRequests(stateDir: string, count: number): void {
  const states = ["created", "queued", "processing", "completed", "failed", "timeout"] as const;
  const dir = path.join(stateDir, "requests");
  fs.mkdirSync(dir, { recursive: true });
  const start = Date.UTC(2026, 10, 1);
  for (let i = 0; i < count; i++) {
    const state = states[i % states.length]!;
    const createdAt = start + i * 37_000;
    const transitions: ({ at: number } & Record<string, unknown>)[] = [{ from: null, to: "created", at: createdAt }];
    if (state !== "created") transitions.push({ from: "created", to: "queued", at: createdAt + 1000 });
    if (state === "failed" || state === "timeout") {
      transitions.push({ from: "queued", to: "processing", at: createdAt + 1500, token: `t${i}-1`, worker: { pid: 100_000 + (i % 7), host: "h" } });
      transitions.push({ from: "processing", to: "queued", at: createdAt + 1700, token: `t${i}-1`, error: "rate limited" });
    }
    if (state !== "created" && state !== "queued")
      transitions.push({ from: "queued", to: "processing", at: createdAt + 2000, token: `t${i}`, worker: { pid: 100_000 + (i % 5), host: "h" } });
    if (state !== "created" && state !== "queued" && state !== "processing")
      transitions.push({ from: "processing", to: state, at: createdAt + 4000 + (i % 90) * 1000, token: `t${i}` });
    const request = {
      requestId: `r${String(i).padStart(5, "0")}`,
      workspace: `ws${i % 7}`,
      sessionId: `s${i % 40}`,
      state,
      createdAt,
      lastUpdatedAt: transitions.at(-1)!.at,
      prompt: `prompt ${i}`,
      version: transitions.length,
      transitions,
    };
    const file = path.join(dir, `${request.requestId}.json`);
    fs.writeFileSync(file, JSON.stringify(request));
    // Written when it was last updated, as its writer would have: a rebuild in steps goes newest first by this.
    fs.utimesSync(file, new Date(request.lastUpdatedAt), new Date(request.lastUpdatedAt));
  }
}

/** The ids of the `n` most recently updated requests in the folder, as the table sorts them (newest first, then by id). */
export function newestIds(stateDir: string, n: number): string[] {
  const dir = path.join(stateDir, "requests");
  const rows = fs.readdirSync(dir).map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) as { requestId: string; lastUpdatedAt: number });
  rows.sort((a, b) => b.lastUpdatedAt - a.lastUpdatedAt || (a.requestId < b.requestId ? 1 : -1));
  return rows.slice(0, n).map((row) => row.requestId);
}
