import fs from "node:fs";
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { TrackerContext } from "../store/context";
import { ipcDirExists } from "../stateFiles/ipcDir";
import { ingestResponseFiles, reconcileResponses } from "../responses/responseIndex";

export interface ResponsesStatus {
  /** The ipc folder followed, or null when there is none. */
  ipcDir: string | null;
  /**
   * "following": chokidar watches it; "waiting": it does not exist yet (a fresh gateway's first stop
   * hook creates it) and is followed from the moment it appears; "reconciling": the watcher failed,
   * the periodic reconciliation alone keeps up.
   */
  mode: "following" | "waiting" | "reconciling" | "off";
  /** True once the watcher has scanned the folder: changes from then on arrive within ~10 ms. */
  ready: boolean;
  error: string | null;
  /** Response files ingested on the watcher's word. */
  ingested: number;
}

const FLUSH_DELAY_MS = 10;
/** After a folder appears, the ipc folder is reconciled once this long after: a file written into it at once can come before its watch. */
const NEW_FOLDER_RECONCILE_MS = 100;

/**
 * Whether chokidar should look at `file` under the ipc folder: the folder, a workspace folder, its
 * `responses/`, and the `.json` files in it; nothing else (temp files, other folders of the gateway).
 */
function ignored(ipcDir: string, file: string): boolean {
  const relative = path.relative(ipcDir, file);
  if (relative === "") return false;
  const parts = relative.split(path.sep);
  if (parts.length === 1) return parts[0]!.startsWith(".");
  if (parts.length === 2) return parts[1] !== "responses";
  return parts.length !== 3 || !parts[2]!.endsWith(".json") || parts[2]!.startsWith(".");
}

/**
 * Follow a gateway's ipc folder live: a small nested tree (one folder per workspace, which appear
 * while the dashboard runs) of files replaced by rename, which is what chokidar is for; the big
 * requests folder keeps its single `fs.watch`. Each add, change or unlink reaches the index (and
 * the feed) within ~10 ms; the periodic reconciliation (lib/ingest/folderIngest.ts) catches anything missed.
 */
export class ResponsesFollower {
  readonly #ctx: TrackerContext;
  readonly #onError: (error: unknown) => void;
  readonly #ipcDir: string | null;
  readonly #status: ResponsesStatus;
  readonly #pending = new Set<string>();
  #timer: NodeJS.Timeout | null = null;
  #watcher: FSWatcher | null = null;
  #folderTimer: NodeJS.Timeout | null = null;
  /** Until the folder exists, its parent is watched for it (and `appeared` is asked at each reconciliation too, for a parent that cannot be watched or is not there either). */
  #parentWatcher: fs.FSWatcher | null = null;
  #stopped = false;

  constructor(ctx: TrackerContext, onError: (error: unknown) => void) {
    this.#ctx = ctx;
    this.#onError = onError;
    const ipcDir = (this.#ipcDir = ctx.dir.ipcDir);
    this.#status = { ipcDir, mode: ipcDir ? "following" : "off", ready: false, error: null, ingested: 0 };
    if (ipcDir && ipcDirExists(ipcDir)) this.#follow(ipcDir);
    else if (ipcDir) this.#waitFor(ipcDir);
  }

  status(): ResponsesStatus {
    return { ...this.#status };
  }

  /** Ingest what the watcher has queued, now (tests; it does so on its own within ~10 ms). */
  flush(): void {
    this.#timer = null;
    if (!this.#pending.size) return;
    const files = [...this.#pending];
    this.#pending.clear();
    try {
      ingestResponseFiles(this.#ctx, files);
      this.#status.ingested += files.length;
    } catch (error) {
      this.#onError(error);
    }
  }

  /** Start following the ipc folder if it has appeared since (the periodic reconciliation asks). */
  appeared(): void {
    const ipcDir = this.#ipcDir;
    if (this.#status.mode !== "waiting" || this.#stopped || !ipcDirExists(ipcDir)) return;
    this.#parentWatcher?.close();
    this.#parentWatcher = null;
    this.#follow(ipcDir);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#parentWatcher?.close();
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#folderTimer) clearTimeout(this.#folderTimer);
    await this.#watcher?.close();
  }

  #reconcile(): void {
    try {
      reconcileResponses(this.#ctx);
    } catch (error) {
      this.#onError(error);
    }
  }

  #queue(file: string): void {
    this.#pending.add(file);
    this.#timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
  }

  #follow(dir: string): void {
    const status = this.#status;
    status.mode = "following";
    status.ready = false;
    const queue = (file: string) => this.#queue(file);
    const watcher = (this.#watcher = watch(dir, { ignoreInitial: true, persistent: false, depth: 2, ignored: (file) => ignored(dir, file) }));
    watcher.on("add", queue).on("change", queue).on("unlink", queue);
    watcher.on("addDir", (folder) => {
      if (folder === dir || this.#folderTimer) return;
      this.#folderTimer = setTimeout(() => {
        this.#folderTimer = null;
        this.#reconcile();
      }, NEW_FOLDER_RECONCILE_MS);
    });
    // Anything written before the scan ended is in the reconciliation that follows it.
    watcher.on("ready", () => {
      status.ready = true;
      this.#reconcile();
    });
    watcher.on("error", (error) => {
      status.mode = "reconciling";
      status.error = error instanceof Error ? error.message : String(error);
    });
  }

  #waitFor(ipcDir: string): void {
    this.#status.mode = "waiting";
    this.#status.ready = true;
    try {
      this.#parentWatcher = fs.watch(path.dirname(ipcDir), { persistent: false }, (_event, name) => {
        if (name === null || name.toString() === path.basename(ipcDir)) this.appeared();
      });
      this.#parentWatcher.on("error", () => {
        this.#parentWatcher?.close();
        this.#parentWatcher = null;
      });
    } catch {
      // No parent to watch: the reconciliations ask.
    }
  }
}
