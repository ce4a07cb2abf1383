import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveListFilters } from "../../lib/model/listFilters";
import { LiveSource } from "../../lib/sources/liveSource";
import { aClaudeMemWorker } from "../helpers/claudeMemWorker";
import { runCli } from "../helpers/cli";
import { eventually } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";

// claude-mem 13.25.3's own worker (its npm package, run by Bun as its hooks run it), sent what its
// hooks send while Claude Code works. With no Claude CLI for its agent, what it is sent waits in its
// in-memory queue: the case reqwatch exists for. reqwatch follows it over HTTP, read-only.
const MIN = 60_000;
const open: { close(): void }[] = [];
const workers: { remove(): Promise<void> }[] = [];
afterEach(async () => {
  for (const source of open.splice(0)) source.close();
  for (const worker of workers.splice(0)) await worker.remove();
});

async function aWorker(options: Parameters<typeof aClaudeMemWorker>[0] = {}) {
  const worker = await aClaudeMemWorker(options);
  workers.push(worker);
  return worker;
}

function aSource(database: string, storeDir = fs.mkdtempSync(path.join(tempParent(), "store-"))) {
  const source = new LiveSource("claude-mem", { kind: "claude-mem", file: database }, storeDir);
  open.push(source);
  return { source, storeDir };
}

const firstPage = (source: LiveSource, now = Date.now()) => source.page(resolveListFilters({ limit: 50 }), now).items;

/** Every file of a folder and its bytes' hash. */
function contents(dir: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const file = path.join(entry.parentPath, entry.name);
        return [path.relative(dir, file), crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")];
      }),
  );
}

describe("claude-mem 13, followed through its worker", () => {
  it("sees the generation, and what waits in the worker's memory as one queue lifecycle: stuck past claude-mem's own limit, with why", async () => {
    const worker = await aWorker();
    await worker.observe("session-1", 3);
    expect(await worker.status()).toMatchObject({ queueDepth: 3 });
    const { source } = aSource(worker.database);

    const spell = await eventually(() => {
      source.refresh();
      return firstPage(source).find((message) => message.request.requestId.startsWith("claude-mem-queue-"));
    }, 15_000);
    expect(spell.request).toMatchObject({ workspace: "claude-mem", prompt: expect.stringContaining("up to 3 observations") });
    expect(["queued", "processing"]).toContain(spell.request.state);
    expect(spell.request.prompt).toContain(`pid ${worker.pid}`);
    expect(spell).toMatchObject({ stuck: null, note: expect.stringContaining("3 waiting") });
    const status = source.status();
    expect(status).toMatchObject({ kind: "claude-mem", generation: "g8 (v13.9.1 onward)", retired: true, total: 1, stuck: 0 });
    expect(status.worker).toMatchObject({
      running: true,
      url: worker.url,
      settings: path.join(worker.dataDir, "settings.json"),
      snapshot: { version: "13.25.3", queueDepth: 3, pid: worker.pid },
    });
    // Its agent cannot start here: the worker says so, and reqwatch passes it on.
    expect(status.worker!.snapshot!.degraded.join()).toContain("claude_cli");

    // Six minutes on with the queue where it was: stuck, by claude-mem's own five-minute limit
    // (counted from when the queue filled, not from this line, so the figure does not grow with the machine's pace).
    const later = spell.request.createdAt + 6 * MIN;
    source.refresh(later);
    expect(source.status().stuck).toBe(1);
    const [stuck] = source.stuck();
    expect(stuck!.reason()).toMatch(
      /^3 observations waiting 6m with no progress \(none has left the queue since it filled\); claude-mem reports claude_cli: .*; they are in the worker's memory only: stopping it loses them$/,
    );
    // Its page: how the queue went.
    const own = source.get(spell.request.requestId, later)!;
    expect(own.steps!.map((step) => step.name)).toEqual(["queued"]);
    expect(own.steps![0]!.summary).toBe("3 observations in the queue");
  }, 120_000);

  it("a worker killed with work in memory: the lifecycle fails saying the work was lost; the source says the worker is not running, and where it asked", async () => {
    const worker = await aWorker();
    await worker.observe("session-1", 2);
    const { source, storeDir } = aSource(worker.database);
    await eventually(() => (source.refresh(), source.status().total === 1 || undefined), 15_000);
    await worker.kill("SIGKILL");

    const failed = await eventually(() => {
      source.refresh();
      return firstPage(source).find((message) => message.request.state === "failed");
    }, 15_000);
    expect(failed.request.error).toBe(
      `claude-mem's worker (pid ${worker.pid}) stopped with 2 observations in its queue; claude-mem keeps the queue in memory, so they were lost`,
    );
    // The look under way when it died may say the connection closed; the next says nothing answers.
    await eventually(() => (source.refresh(), source.status().worker?.error?.includes("nothing answers") || undefined), 15_000);
    expect(source.status().worker).toMatchObject({
      running: false,
      snapshot: null,
      error: `claude-mem's worker is not running: nothing answers on ${worker.url} (the port in ${path.join(worker.dataDir, "settings.json")})`,
    });

    // Kept in reqwatch's own store: a dashboard started again shows what happened.
    source.close();
    const again = aSource(worker.database, storeDir).source;
    again.refresh();
    expect(firstPage(again).map((message) => [message.request.requestId, message.request.state])).toEqual([[failed.request.requestId, "failed"]]);
    expect(fs.readdirSync(storeDir).filter((name) => name.endsWith(".db"))).toHaveLength(1);
  }, 120_000);

  it("a worker that gives no answer for a while (paused) is not taken for stopped: its lifecycle keeps its work, and goes on once it answers", async () => {
    const worker = await aWorker();
    await worker.observe("session-1", 2);
    const { source } = aSource(worker.database);
    await eventually(() => (source.refresh(), source.status().total === 1 || undefined), 15_000);
    worker.signal("SIGSTOP");
    const silent = await eventually(() => (source.refresh(), source.status().worker?.silent ? source.status().worker : undefined), 30_000);
    expect(silent!.error).toBe(
      `claude-mem's worker gave no answer within 2 s on ${worker.url} (the port in ${path.join(worker.dataDir, "settings.json")}): busy or paused; its queue is shown as last seen`,
    );
    // Another look while it is paused: still one lifecycle, not failed.
    await eventually(() => (source.refresh(), source.status().worker?.silent && source.status().worker!.seenAt !== null ? true : undefined), 30_000);
    expect(firstPage(source).map((message) => message.request.state)).toEqual([expect.stringMatching(/^(queued|processing)$/)]);
    worker.signal("SIGCONT");
    await eventually(() => (source.refresh(), source.status().worker?.running || undefined), 30_000);
    const [spell] = firstPage(source);
    expect(firstPage(source)).toHaveLength(1);
    expect(spell!.request.state).not.toBe("failed");
    expect(spell!.note).toContain("2 waiting");
  }, 120_000);

  it("reads only: claude-mem's folder is byte for byte the same after reqwatch looked, and `reqwatch source` says what the worker holds", async () => {
    const worker = await aWorker();
    await worker.observe("session-1", 1);
    await worker.kill("SIGTERM");
    // The worker stopped: whatever changes in its folder now, reqwatch changed.
    const before = contents(worker.dataDir);
    const { source } = aSource(worker.database);
    for (let look = 0; look < 5; look++) source.refresh(Date.now() + look * 6000);
    // Its look at the worker has answered (and been written to reqwatch's own store): nothing answers.
    await eventually(() => source.status().worker?.error?.includes("nothing answers") || undefined, 15_000);
    expect(source.status().worker).toMatchObject({ running: false });
    const down = runCli(["source", `claude-mem:${worker.database}`]);
    expect(down).toMatchObject({ code: 0, stderr: "" });
    expect(down.stdout).toContain(
      `worker: claude-mem's worker is not running: nothing answers on ${worker.url} (the port in ${path.join(worker.dataDir, "settings.json")})`,
    );
    source.close();
    // Every file as it was; beside the database, only what an SQLite reader of a WAL database needs (an empty -wal, the -shm index).
    const after = contents(worker.dataDir);
    expect(Object.fromEntries(Object.entries(after).filter(([name]) => name in before))).toEqual(before);
    expect(Object.keys(after).filter((name) => !(name in before))).toEqual(["claude-mem.db-shm", "claude-mem.db-wal"].filter((name) => name in after));
    if (after["claude-mem.db-wal"]) expect(fs.statSync(path.join(worker.dataDir, "claude-mem.db-wal")).size).toBe(0);

    const idle = await aWorker({ home: worker.home, port: worker.port });
    const cli = runCli(["source", `claude-mem:${idle.database}`]);
    expect(cli).toMatchObject({ code: 0, stderr: "" });
    expect(cli.stdout).toContain(`worker: claude-mem 13.25.3's worker (pid ${idle.pid}) on ${idle.url}: 0 observations queued, idle`);
    expect(cli.stdout).toContain("schema: g8 (v13.9.1 onward); from v13.4.0 claude-mem keeps its queue in memory");
  }, 180_000);
});
