import type { WorkerSnapshot } from "../spells/spellStore";
import { workerUrl, type WorkerAddress } from "./workerAddress";

/**
 * claude-mem from v13.4.0 keeps its queue in its worker's memory and says what it holds only over
 * HTTP, on 127.0.0.1 at the port of its settings: `/api/processing-status` (queue depth,
 * processing, parked sessions), `/health` (active sessions, pid), `/api/health` (version, degraded
 * dependencies) and the event stream `/stream` (`processing_status` at each change,
 * `observation_queued` per observation). reqwatch only reads them. What it sees becomes
 * lifecycles: one per busy spell of a worker (work arrived, until the queue is empty again, or the
 * worker stops with work in memory, which claude-mem then loses), kept in reqwatch's own store.
 */

const count = (value: unknown) => (typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0);

async function getJson(url: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "error" });
  // /api/health answers 503 with its body when a dependency is down: still an answer.
  const body = (await response.json()) as unknown;
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new Error(`${url} did not answer with a JSON object (HTTP ${response.status})`);
  return body as Record<string, unknown>;
}

/** Ask the worker what it holds; throws WORKER_DOWN-style errors as `WorkerDown` when nothing (or not claude-mem) answers. */
async function askWorker(address: WorkerAddress, timeoutMs = 2000): Promise<WorkerSnapshot> {
  const base = workerUrl(address);
  let status: Record<string, unknown>;
  let health: Record<string, unknown>;
  let about: Record<string, unknown>;
  try {
    [status, health, about] = await Promise.all([
      getJson(`${base}/api/processing-status`, timeoutMs),
      getJson(`${base}/health`, timeoutMs),
      getJson(`${base}/api/health`, timeoutMs),
    ]);
  } catch (error) {
    throw new WorkerDown(address, error);
  }
  if (typeof status.queueDepth !== "number")
    throw new WorkerDown(address, new Error(`${base}/api/processing-status has no queueDepth: not a claude-mem v13 worker`));
  const dependencies = about.dependencies as { statuses?: { dependency?: unknown; message?: unknown }[] } | undefined;
  return {
    pid: typeof health.pid === "number" ? health.pid : typeof about.pid === "number" ? about.pid : null,
    version: typeof about.version === "string" ? about.version.slice(0, 32) : null,
    queueDepth: count(status.queueDepth),
    isProcessing: status.isProcessing === true,
    parkedSessions: count(status.parkedSessions),
    activeSessions: count(health.activeSessions),
    degraded: (Array.isArray(dependencies?.statuses) ? dependencies.statuses : [])
      .map(
        (entry) =>
          `${String(entry.dependency ?? "?")}: ${String(entry.message ?? "")
            .split("\n")[0]!
            .slice(0, 200)}`,
      )
      .slice(0, 5),
  };
}

export class WorkerDown extends Error {
  /** Something holds the port but gave no answer in time (a busy or paused worker): not a sign the worker stopped. */
  readonly silent: boolean;

  constructor(
    readonly address: WorkerAddress,
    cause: unknown,
  ) {
    const silent = (cause as { name?: string } | null)?.name === "TimeoutError";
    const where = `${workerUrl(address)} (${address.settings ? `the port in ${address.settings}` : "claude-mem's default port"})`;
    super(
      silent
        ? `claude-mem's worker gave no answer within 2 s on ${where}: busy or paused; its queue is shown as last seen`
        : `claude-mem's worker is not running: ${whyDown(cause)} on ${where}`,
      { cause },
    );
    this.silent = silent;
  }
}

/** Why a request to the worker failed, in words: fetch's own message is only "fetch failed". */
function whyDown(error: unknown): string {
  const { message, cause } = error as { message?: string; cause?: { code?: string } };
  if (cause?.code === "ECONNREFUSED") return "nothing answers";
  if (cause?.code === "ECONNRESET" || cause?.code === "UND_ERR_SOCKET") return "the connection closed mid-answer";
  return message ?? String(error);
}

/** What the source shows of the worker beside its spells. */
export interface WorkerStatus {
  url: string;
  /** Where the port came from: claude-mem's settings file, or null for its default. */
  settings: string | null;
  running: boolean;
  /** It gave no answer in time: it may be busy or paused, so what it held is kept as last seen. */
  silent: boolean;
  /** Why it cannot be asked, when it is not running. */
  error: string | null;
  snapshot: WorkerSnapshot | null;
  /** When it last answered. */
  seenAt: number | null;
}

/** Ask the worker once, as the source shows it: what it holds, or why it could not be asked (`seenAt`: when it last answered). */
export async function workerStatus(address: WorkerAddress, seenAt: number | null = null): Promise<WorkerStatus> {
  const asked = { url: workerUrl(address), settings: address.settings };
  try {
    return { ...asked, running: true, silent: false, error: null, snapshot: await askWorker(address), seenAt: Date.now() };
  } catch (error) {
    return { ...asked, running: false, silent: error instanceof WorkerDown && error.silent, error: (error as Error).message, snapshot: null, seenAt };
  }
}
