import path from "node:path";
import { ReqwatchError } from "../model/errors";
import { jsonObject, readSmallJson } from "../fs/readSmallJson";

/** Where a claude-mem worker answers, and where that was read. */
export interface WorkerAddress {
  host: string;
  port: number;
  /** The settings file the port came from, or null for claude-mem's default. */
  settings: string | null;
}

/** claude-mem's default port (v13): 37700 plus the user's id modulo 100, so each user of a machine has their own. */
export function defaultWorkerPort(uid = process.getuid?.() ?? 77): number {
  return 37700 + (uid % 100);
}

/** claude-mem's settings are a few lines. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "0.0.0.0", ""]);

/**
 * The worker's address from claude-mem's settings in its data folder (the folder of its database):
 * `CLAUDE_MEM_WORKER_PORT` and `CLAUDE_MEM_WORKER_HOST`, at the top or under `env`, as claude-mem
 * reads them. reqwatch asks only a worker on this machine.
 */
export function claudeMemWorkerAddress(dataDir: string, uid?: number): WorkerAddress {
  const file = path.join(dataDir, "settings.json");
  // Only a small regular file: a FIFO there would freeze the dashboard's one thread. Settings that are
  // not a JSON object: claude-mem itself then runs on its defaults, as without any.
  const read = readSmallJson(file, { maxBytes: MAX_SETTINGS_BYTES, links: "follow", shape: jsonObject });
  const parsed = "value" in read ? read.value : {};
  const settings = parsed.env && typeof parsed.env === "object" && !Array.isArray(parsed.env) ? (parsed.env as Record<string, unknown>) : parsed;
  const from = "value" in read ? file : null;
  const rawPort = settings.CLAUDE_MEM_WORKER_PORT;
  const port = typeof rawPort === "number" || typeof rawPort === "string" ? Number(rawPort) : NaN;
  const host = typeof settings.CLAUDE_MEM_WORKER_HOST === "string" ? settings.CLAUDE_MEM_WORKER_HOST.trim() : "";
  if (!LOOPBACK.has(host))
    throw new ReqwatchError("BAD_INPUT", `claude-mem source: ${file} puts the worker on ${host}; reqwatch reads only a worker on this machine (127.0.0.1).`, {
      file,
    });
  const valid = Number.isInteger(port) && port > 0 && port < 65536;
  return { host: host === "::1" ? "::1" : "127.0.0.1", port: valid ? port : defaultWorkerPort(uid), settings: valid ? from : null };
}

export function workerUrl(address: WorkerAddress): string {
  return `http://${address.host === "::1" ? "[::1]" : address.host}:${address.port}`;
}
