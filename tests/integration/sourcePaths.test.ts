import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SourceStatus } from "../../lib/sources/liveSource";
import { runCli } from "../helpers/cli";
import { aFifo, feedFifo } from "../helpers/fifo";
import { aDashboard } from "../helpers/dashboard";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { tempParent, tempStateDir } from "../helpers/stateDir";

const MIN = 60_000;
afterEach(async () => {
  vi.unstubAllEnvs();
  await closeAgents();
});

/** A job queue with a folder per job, with one job processing for a minute, whose pid file (in its folder, named by the database's row) is a FIFO. */
function aJobWithAFifoPidFile() {
  const dir = tempParent();
  const db = new Database(path.join(dir, "queue.db"));
  db.exec("CREATE TABLE jobs (id TEXT PRIMARY KEY, status TEXT NOT NULL, payload TEXT NOT NULL, locked_at INTEGER)");
  const taskDir = path.join(dir, "tasks", "t1");
  fs.mkdirSync(path.join(taskDir, "meta"), { recursive: true });
  const pidFile = aFifo(path.join(taskDir, "meta", "ai.pid"));
  db.prepare("INSERT INTO jobs VALUES ('t1', 'processing', ?, ?)").run(JSON.stringify({ taskDir }), Date.now() - MIN);
  db.close();
  const mapping = path.join(dir, "jobs.json");
  fs.writeFileSync(
    mapping,
    JSON.stringify({
      database: "queue.db",
      table: "jobs",
      id: "id",
      status: { column: "status", values: { processing: "processing" } },
      times: { created: "locked_at", started: "locked_at" },
      stuckAfter: "1h",
      markers: { payload: "payload", key: "taskDir", pid: "{dir}/meta/ai.pid" },
    }),
  );
  return { mapping, pidFile, note: `its pid file ${pidFile} is a FIFO (a named pipe), not a regular file: not read` };
}

describe("a job's pid file that is not a regular file", () => {
  it("a FIFO is not opened: the dashboard answers throughout and says why it judged without it", async () => {
    const job = aJobWithAFifoPidFile();
    // A reader that opened the FIFO would get this (live) pid and judge the job by it.
    await feedFifo(job.pidFile, String(process.pid));
    vi.stubEnv("REQWATCH_SOURCES", `sqlite:${job.mapping}`);
    const dashboard = await aDashboard();

    const { sources } = (await dashboard.ask("/api/sources")).json<{ sources: SourceStatus[] }>();
    expect(sources).toEqual([expect.objectContaining({ name: "jobs", error: null, total: 1, stuck: 0 })]);
    const row = await dashboard.ask("/api/sources/jobs/requests/jobs-t1");
    expect(row.json()).toMatchObject({ request: { state: "processing" }, stuckReason: null, note: job.note });
    expect((await dashboard.ask("/api/status")).status).toBe(200);
  });

  it("reqwatch source returns, with the same word on it", async () => {
    const job = aJobWithAFifoPidFile();
    await feedFifo(job.pidFile, String(process.pid));
    const result = runCli(["source", `sqlite:${job.mapping}`, "--all", "--json"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout).messages).toEqual([expect.objectContaining({ requestId: "jobs-t1", stuckReason: null, note: job.note })]);
  });
});

describe("the MCP tool source_queue reads only what the user configured", () => {
  /** A token file outside the state folder, a FIFO and a device: what an agent must never have read. */
  function hostilePaths() {
    const dir = tempParent();
    const token = path.join(dir, "token");
    fs.writeFileSync(token, "root:x:0:0:ghp_TOKENTOKENTOKEN\n");
    return { dir, token, fifo: aFifo(path.join(dir, "pipe.json")) };
  }

  it("refuses any path the user did not configure, before opening it, and keeps serving", async () => {
    const { token, fifo } = hostilePaths();
    const agent = await anAgent(tempStateDir());
    for (const source of [`sqlite:${token}`, `claude-mem:${token}`, `sqlite:${fifo}`, "sqlite:/dev/zero", "claude-mem:/dev/stdin"]) {
      const answer = await call(agent, "source_queue", { source });
      expect(answer, source).toMatchObject({ isError: true, text: expect.stringContaining(`${JSON.stringify(source)} is not a source this server was given`) });
      expect(answer.text).toContain("claude-mem (");
      expect(answer.text).not.toMatch(/root:x|TOKEN/);
    }
    expect(JSON.parse((await call(agent, "stuck")).text)).toEqual({ count: 0, stuck: [] });
  });

  it("a configured path that is a FIFO, a device or no mapping is refused as such, without blocking and quoting nothing of it", async () => {
    const { token, fifo } = hostilePaths();
    const sources = [`sqlite:${token}`, `claude-mem:${token}`, `sqlite:${fifo}`, "sqlite:/dev/zero"];
    const agent = await anAgent(tempStateDir(), { REQWATCH_SOURCES: JSON.stringify(sources) });
    expect(await call(agent, "source_queue", { source: `sqlite:${token}` })).toEqual({
      isError: true,
      text: `sqlite source: the mapping ${token} is not JSON; nothing was read.`,
    });
    expect(await call(agent, "source_queue", { source: `claude-mem:${token}` })).toEqual({
      isError: true,
      text: `claude-mem source: ${token} is not an SQLite database.`,
    });
    const fifoRefused = { isError: true, text: `sqlite source: the mapping ${fifo} is a FIFO (a named pipe), not a regular file; nothing was read.` };
    expect(await call(agent, "source_queue", { source: `sqlite:${fifo}` })).toEqual(fifoRefused);
    // By the name the dashboard gives it, too.
    expect(await call(agent, "source_queue", { source: "pipe" })).toEqual(fifoRefused);
    expect(await call(agent, "source_queue", { source: "sqlite:/dev/zero" })).toEqual({
      isError: true,
      text: "sqlite source: the mapping /dev/zero is a character device, not a regular file; nothing was read.",
    });
    expect(JSON.parse((await call(agent, "stuck")).text)).toEqual({ count: 0, stuck: [] });
  });
});
