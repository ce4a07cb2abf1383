import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, waitForExit, waitForLine } from "./processes";

export interface RedisServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * A real Redis (Debian's redis-server) on 127.0.0.1 and a free port, keeping nothing on disk (no
 * snapshot, no append-only file, its folder a temporary one removed when it stops).
 */
export async function aRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-redis-"));
  const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    await waitForLine(server, "Ready to accept connections");
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    stop: async () => {
      server.kill("SIGTERM");
      await waitForExit(server);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
