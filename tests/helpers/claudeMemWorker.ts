import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { installedClaudeMem } from "./clients";
import { freePort } from "./processes";

/**
 * claude-mem 13's real worker, as its hooks start it (Bun running plugin/scripts/worker-service.cjs),
 * in a home folder of its own with its port in its settings file, where a user sets it. No Claude
 * CLI is on its PATH, so the observations it is sent wait in its in-memory queue: its SDK agent
 * cannot start (what /api/health then reports degraded).
 */
export async function aClaudeMemWorker(options: { home?: string; port?: number } = {}) {
  const { worker, bun } = installedClaudeMem();
  // Its own temporary home (the helper is shared by vitest and Playwright, so not tests/helpers/stateDir's).
  const home = options.home ?? fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-claude-mem-"));
  const dataDir = path.join(home, ".claude-mem");
  fs.mkdirSync(dataDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const settings = path.join(dataDir, "settings.json");
  const current = fs.existsSync(settings) ? (JSON.parse(fs.readFileSync(settings, "utf8")) as Record<string, unknown>) : {};
  fs.writeFileSync(settings, JSON.stringify({ ...current, CLAUDE_MEM_WORKER_PORT: String(port) }, null, 2));
  const env = { ...process.env, PATH: `${path.dirname(bun)}:/usr/bin:/bin`, HOME: home, CLAUDE_MEM_DATA_DIR: dataDir, CLAUDE_MEM_WORKER_PORT: undefined };
  const child = spawn(bun, [worker], { cwd: path.dirname(worker), env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout!.on("data", (chunk) => (log += chunk));
  child.stderr!.on("data", (chunk) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const ask = async (route: string, body?: unknown) => {
    const response = await fetch(
      `${url}${route}`,
      body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
    );
    return (await response.json()) as Record<string, unknown>;
  };
  // Ready once it says its database is initialized (it answers /health before that).
  for (let waited = 0; ; waited += 100) {
    const ready = await ask("/api/health").then(
      (health) => health.initialized === true,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || waited > 60_000) throw new Error(`claude-mem's worker did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    port,
    home,
    dataDir,
    database: path.join(dataDir, "claude-mem.db"),
    pid: child.pid!,
    log: () => log,
    /** A session's prompt, then tool uses: what claude-mem's hooks send while Claude Code works. */
    async observe(session: string, tools: number, project = "demo") {
      await ask("/api/sessions/init", { contentSessionId: session, project, prompt: "fix the failing test" });
      for (let i = 1; i <= tools; i++) {
        const queued = await ask("/api/sessions/observations", {
          contentSessionId: session,
          tool_name: "Bash",
          tool_input: { command: `ls ${i}` },
          tool_response: { stdout: "ok" },
          cwd: home,
          tool_use_id: `${session}-t${i}`,
        });
        if (queued.status !== "queued") throw new Error(`claude-mem did not queue the observation: ${JSON.stringify(queued)}`);
      }
    },
    status: () => ask("/api/processing-status"),
    async kill(signal: NodeJS.Signals = "SIGKILL") {
      if (child.exitCode !== null) return;
      // A paused worker is let go on first, or a SIGTERM would wait for it.
      if (signal !== "SIGKILL") this.signal("SIGCONT");
      try {
        // The worker may start children (its agent, chroma); the group goes with it.
        process.kill(-child.pid!, signal);
      } catch {
        child.kill(signal);
      }
      await exited;
    },
    /** Paused (SIGSTOP: it holds its port and answers nothing) or let go on (SIGCONT), its children with it. */
    signal(signal: "SIGSTOP" | "SIGCONT") {
      process.kill(-child.pid!, signal);
    },
    /** Stopped, and its home folder removed. */
    async remove() {
      await this.kill();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}
