import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { TelemetryStatus } from "../../lib/telemetry/startTelemetry";
import { aDashboard } from "../helpers/dashboard";
import { recordedExports, sendExports } from "../helpers/recordedExports";
import { CLAUDE_CODE_FIXTURES } from "../helpers/claudeCodeExports";
import { tempStateDir } from "../helpers/stateDir";

// The receiver's own store (telemetry.db, beside the index) deleted, replaced or damaged under a
// running dashboard, or found damaged at its start: every export it acknowledged is in the store
// on disk, and the folder's pages keep working.
const SETTINGS = { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 };
const GARBAGE = Buffer.from("this is not an SQLite database, and never was one; ".repeat(200));

/** Turns kept in the store at `file`, read as a new process would. */
function turnsIn(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM lifecycles WHERE kind = 'turn'").pluck().get() as number;
  } finally {
    db.close();
  }
}

async function aReceivingDashboard(stateDir = tempStateDir()) {
  const dashboard = await aDashboard({ stateDir }, SETTINGS);
  const status = await dashboard.runtime.telemetry!.ready;
  const send = (scenario: string) => sendExports(status.url!, recordedExports(path.join(CLAUDE_CODE_FIXTURES, scenario)));
  return { ...dashboard, file: path.join(stateDir, "telemetry.db"), send };
}

describe("the telemetry store, lost or damaged", () => {
  it("found damaged at the start: set aside (its bytes kept, named on Health), a new one started, the folder's pages and the otel source answering", async () => {
    const stateDir = tempStateDir();
    fs.writeFileSync(path.join(stateDir, "telemetry.db"), GARBAGE);
    const { ask, file, send } = await aReceivingDashboard(stateDir);
    const health = (await ask("/api/health")).json<{ telemetry: TelemetryStatus }>();
    expect(health.telemetry.setAside).toHaveLength(1);
    expect(fs.readFileSync(health.telemetry.setAside[0]!)).toEqual(GARBAGE);
    for (const route of ["/api/requests", "/api/requests?source=otel", "/api/sessions", "/api/overview"]) expect((await ask(route)).status, route).toBe(200);
    await send("plain");
    expect(turnsIn(file)).toBe(1);
  });

  it("deleted while the dashboard runs: the next export is kept in a new store on disk, not in the deleted file", async () => {
    const { file, send } = await aReceivingDashboard();
    await send("plain");
    expect(turnsIn(file)).toBe(1);
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
    await send("tool");
    expect(turnsIn(file)).toBe(1);
    await send("retry");
    expect(turnsIn(file)).toBe(2);
  });

  it("damaged in place while it runs: the export that finds it is answered 503 (sent again by its exporter), the store set aside, the next kept", async () => {
    const { ask, file, runtime } = await aReceivingDashboard();
    const url = (await runtime.telemetry!.ready).url!;
    await sendExports(url, recordedExports(path.join(CLAUDE_CODE_FIXTURES, "plain")));
    // Everything in the file itself (none in its write-ahead log), then another program writes over all of it (the same file: its inode kept).
    const db = new Database(file);
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, "r+");
    for (let at = 0; at < size; at += GARBAGE.length) fs.writeSync(fd, GARBAGE, 0, Math.min(GARBAGE.length, size - at), at);
    fs.closeSync(fd);
    const exports = recordedExports(path.join(CLAUDE_CODE_FIXTURES, "tool"));
    const answers: number[] = [];
    for (const item of exports) {
      // As an exporter does: a 503 is sent again.
      for (;;) {
        const response = await fetch(`${url}/v1/${item.signal}`, {
          method: "POST",
          body: new Uint8Array(item.body),
          headers: { "content-type": item.contentType, ...(item.gzip && { "content-encoding": "gzip" }) },
        });
        answers.push(response.status);
        if (response.status !== 503) break;
      }
    }
    expect(answers.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(turnsIn(file)).toBe(1);
    const health = (await ask("/api/health")).json<{ telemetry: TelemetryStatus }>();
    expect(health.telemetry.setAside).toHaveLength(1);
  });
});
