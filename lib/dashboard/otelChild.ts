import { spawn, type ChildProcess } from "node:child_process";
import { NO_EXPORT_YET, type OtelExportStatus } from "../otel/exportStatus";

/** What `reqwatch otel` sends its parent over the IPC channel: its status, looked at every STATUS_EVERY_MS and sent when it changed. */
export interface OtelStatusMessage {
  type: "otel-status";
  status: OtelExportStatus;
}

export const STATUS_EVERY_MS = 250;
const RESTART_FIRST_MS = 5000;
const RESTART_MAX_MS = 300_000;

function isOtelStatusMessage(message: unknown): message is OtelStatusMessage {
  return typeof message === "object" && message !== null && (message as { type?: unknown }).type === "otel-status";
}

/**
 * The dashboard's OpenTelemetry export (`--otel`) in a `reqwatch otel` process of its own: the
 * export's work (reading each request, building and encoding its spans, the HTTP) is not the
 * server's, so the pages answer as they did without it. The child reports its status over the IPC
 * channel for the Health page, ends when the server does (its channel closes), and is started again
 * if it ends on its own, after a back-off.
 */
export function startOtelChild(cli: string, stateDir: string, onExit: (code: number | null, restartInMs: number) => void) {
  let child: ChildProcess | null = null;
  let status: OtelExportStatus = NO_EXPORT_YET;
  let stopping = false;
  let restartInMs = RESTART_FIRST_MS;
  let restartTimer: NodeJS.Timeout | null = null;

  const start = () => {
    const started = Date.now();
    const current = spawn(process.execPath, [cli, "otel", "--state-dir", stateDir], { stdio: ["ignore", "inherit", "inherit", "ipc"], env: process.env });
    child = current;
    current.on("message", (message) => {
      if (isOtelStatusMessage(message)) status = message.status;
    });
    current.once("exit", (code) => {
      if (stopping) return;
      // A child that ran a while before it ended starts the back-off again.
      if (Date.now() - started > RESTART_MAX_MS) restartInMs = RESTART_FIRST_MS;
      status = {
        ...status,
        lastError: {
          message: `the exporter process ended (exit code ${code ?? "none"}); it is started again in ${Math.round(restartInMs / 1000)} s`,
          at: Date.now(),
        },
      };
      onExit(code, restartInMs);
      restartTimer = setTimeout(start, restartInMs);
      restartTimer.unref();
      restartInMs = Math.min(RESTART_MAX_MS, restartInMs * 2);
    });
  };
  start();

  return {
    status: (): OtelExportStatus => status,
    /** Ask the child to stop (it sends what it holds and writes its position); wait at most `waitMs` for it. */
    stop(waitMs = 6000): Promise<void> {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const current = child;
      if (!current || current.exitCode !== null || current.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          current.kill("SIGKILL");
          resolve();
        }, waitMs);
        current.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        current.kill("SIGTERM");
      });
    },
  };
}
