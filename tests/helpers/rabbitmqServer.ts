import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, waitForExit, waitForLine } from "./processes";

export interface RabbitmqServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * A real RabbitMQ (Debian's rabbitmq-server) on 127.0.0.1 and a free port, a node of its own: its
 * name, database, logs, cookie and Erlang port mapper (epmd, on a free port too) in a temporary
 * folder, removed when it stops; no plugins.
 */
export async function aRabbitmqServer(): Promise<RabbitmqServer> {
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-rabbitmq-"));
  fs.writeFileSync(path.join(dir, "enabled_plugins"), "[].\n");
  const epmd = { ERL_EPMD_ADDRESS: "127.0.0.1", ERL_EPMD_PORT: String(epmdPort) };
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: dir,
    ...epmd,
    RABBITMQ_NODENAME: `reqwatch${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: "127.0.0.1",
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(dir, "mnesia"),
    RABBITMQ_LOG_BASE: path.join(dir, "log"),
    RABBITMQ_LOGS: "-",
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, "enabled_plugins"),
    RABBITMQ_CONFIG_FILE: path.join(dir, "rabbitmq"),
    RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, "advanced.config"),
  };
  // Its own process group: the script starts the Erlang VM as its child, and both are stopped.
  const server: ChildProcess = spawn("/usr/lib/rabbitmq/bin/rabbitmq-server", [], {
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const stopped = async () => {
    if (server.exitCode === null && server.signalCode === null) process.kill(-server.pid!, "SIGTERM");
    await waitForExit(server);
    // The port mapper the node started runs on by itself until told to stop.
    spawnSync("epmd", ["-kill"], { env: { ...process.env, ...epmd }, stdio: "ignore" });
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForLine(server, "Server startup complete");
  } catch (error) {
    await stopped();
    throw error;
  }
  return { port, stop: stopped };
}
