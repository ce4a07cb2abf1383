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

export interface ResponsesFollower {
  status(): ResponsesStatus;
  /** Ingest what the watcher has queued, now (tests; it does so on its own within ~10 ms). */
  flush(): void;
  /** Start following the ipc folder if it has appeared since (the periodic reconciliation asks). */
  appeared(): void;
  stop(): Promise<void>;
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
 * the feed) within ~10 ms; the periodic reconciliation (startIngest) catches anything missed.
 */
export function followResponses(ctx: TrackerContext, onError: (error: unknown) => void): ResponsesFollower {
  const ipcDir = ctx.dir.ipcDir;
  const status: ResponsesStatus = { ipcDir, mode: ipcDir ? "following" : "off", ready: false, error: null, ingested: 0 };
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let watcher: FSWatcher | null = null;
  let folderTimer: NodeJS.Timeout | null = null;

  const flush = () => {
    timer = null;
    if (!pending.size) return;
    const files = [...pending];
    pending.clear();
    try {
      ingestResponseFiles(ctx, files);
      status.ingested += files.length;
    } catch (error) {
      onError(error);
    }
  };
  const reconcile = () => {
    try {
      reconcileResponses(ctx);
    } catch (error) {
      onError(error);
    }
  };
  const queue = (file: string) => {
    pending.add(file);
    timer ??= setTimeout(flush, FLUSH_DELAY_MS);
  };

  const follow = (dir: string) => {
    status.mode = "following";
    status.ready = false;
    watcher = watch(dir, { ignoreInitial: true, persistent: false, depth: 2, ignored: (file) => ignored(dir, file) });
    watcher.on("add", queue).on("change", queue).on("unlink", queue);
    watcher.on("addDir", (folder) => {
      if (folder === dir || folderTimer) return;
      folderTimer = setTimeout(() => {
        folderTimer = null;
        reconcile();
      }, NEW_FOLDER_RECONCILE_MS);
    });
    // Anything written before the scan ended is in the reconciliation that follows it.
    watcher.on("ready", () => {
      status.ready = true;
      reconcile();
    });
    watcher.on("error", (error) => {
      status.mode = "reconciling";
      status.error = error instanceof Error ? error.message : String(error);
    });
  };

  // Until the folder exists, its parent is watched for it (and `appeared` is asked at each reconciliation too,
  // for a parent that cannot be watched or is not there either).
  let parentWatcher: fs.FSWatcher | null = null;
  const appeared = () => {
    if (status.mode !== "waiting" || stopped || !ipcDirExists(ipcDir)) return;
    parentWatcher?.close();
    parentWatcher = null;
    follow(ipcDir);
  };
  let stopped = false;

  if (ipcDir && ipcDirExists(ipcDir)) follow(ipcDir);
  else if (ipcDir) {
    status.mode = "waiting";
    status.ready = true;
    try {
      parentWatcher = fs.watch(path.dirname(ipcDir), { persistent: false }, (_event, name) => {
        if (name === null || name.toString() === path.basename(ipcDir)) appeared();
      });
      parentWatcher.on("error", () => {
        parentWatcher?.close();
        parentWatcher = null;
      });
    } catch {
      // No parent to watch: the reconciliations ask.
    }
  }
  return {
    status: () => ({ ...status }),
    flush,
    appeared,
    async stop() {
      stopped = true;
      parentWatcher?.close();
      if (timer) clearTimeout(timer);
      if (folderTimer) clearTimeout(folderTimer);
      await watcher?.close();
    },
  };
}
