import { createHash, randomBytes } from "../process/crypto";
import fs from "node:fs";
import path from "node:path";
import { ReqwatchError } from "../model/errors";
import { fsyncDir } from "../fs/durableWrite";
import { resolveIpcDir } from "../stateFiles/ipcDir";
import { errnoWords } from "../fs/errnoWords";
import { jsonObject, readSmallJson } from "../fs/readSmallJson";
import { accessProblem, makeFolder, nearestExisting, pathLengthProblem } from "../fs/folderChecks";
import { stateDirAt, type StateDir } from "../stateFiles/stateDir";
import type { Ownership } from "../types";

/** The file that says reqwatch created (or was given) a state directory: reqwatch writes only where it is. */
export const MARKER_FILE = "reqwatch.json";

export interface OpenStateDirOptions {
  /** Create the folder when it does not exist (a writer's open); a reader gets NOT_FOUND instead. */
  create: boolean;
  /** Observe the folder even when reqwatch manages it. */
  readOnly: boolean;
  /** Where the indexes of observed folders live (`REQWATCH_CACHE_DIR`, else the XDG cache directory). */
  cacheDir: string;
  /** A gateway's ipc folder, if one was named (else `ipc/` beside the folder, when it exists). */
  ipcDir?: string;
  now: () => number;
}

/** The folder under the cache directory that holds an observed folder's index: its name and a hash of its real path. */
function observedStoreDir(root: string, cacheDir: string): string {
  const real = fs.realpathSync(root);
  const name =
    path
      .basename(real)
      .replace(/[^A-Za-z0-9_-]/g, "_")
      .slice(0, 40) || "root";
  return path.join(/*turbopackIgnore: true*/ cacheDir, "observed", `${name}-${createHash("sha256").update(real).digest("hex").slice(0, 12)}`);
}

/** What an earlier reqwatch left in a folder it made, before it wrote a marker. */
const EARLIER_SIGNS = ["index.db", "archive.db", "results"];

function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ENOTDIR") throw notADirectory(path.dirname(file));
    throw new ReqwatchError("IO_ERROR", `Cannot read the state directory ${path.dirname(file)}: ${(error as Error).message}`);
  }
}

/** A state directory that cannot be used where it is: one line that names it and the problem, exit 2 from the CLI. */
function unusable(root: string, problem: string): ReqwatchError {
  return new ReqwatchError("BAD_INPUT", `Cannot use the state directory ${root}: ${problem}.`, { stateDir: root });
}

/** Check the named folder before anything is read from or made in it (an unreadable folder, one under /proc...). */
function checkReachable(root: string, options: { create: boolean }): fs.Stats | null {
  const long = pathLengthProblem(root);
  if (long) throw unusable(root, long);
  let stat: fs.Stats | null;
  try {
    stat = fs.statSync(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR") throw unusable(root, `${nearestExisting(root).existing} is a file, not a folder`);
    if (code !== "ENOENT") {
      const { existing } = nearestExisting(root);
      throw unusable(root, accessProblem(existing, false) ?? errnoWords(error as NodeJS.ErrnoException, root));
    }
    stat = null;
  }
  if (stat && !stat.isDirectory()) throw notADirectory(root);
  if (stat) {
    const problem = accessProblem(root, false);
    if (problem) throw unusable(root, problem);
  } else if (options.create) {
    const problem = makeFolder(root);
    if (problem) throw unusable(root, problem);
  }
  return stat;
}

function notADirectory(root: string): ReqwatchError {
  return new ReqwatchError("BAD_INPUT", `The state directory ${root} is not a directory.`, { stateDir: root });
}

/**
 * Write the marker whole, then link it into place: another process opening the folder at the same
 * moment sees no marker or the whole one, never an empty file (which would not be reqwatch's). The
 * first of several writers wins; the others find it there.
 */
function writeMarker(root: string, how: string, now: number): void {
  const body = `${JSON.stringify({ reqwatch: "state directory", formatVersion: 1, since: new Date(now).toISOString(), how }, null, 2)}\n`;
  const temp = path.join(root, `.${MARKER_FILE}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    fs.writeFileSync(temp, body, { flag: "wx", mode: 0o644 });
    const fd = fs.openSync(temp, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.linkSync(temp, path.join(root, MARKER_FILE));
    fsyncDir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST")
      throw unusable(root, `reqwatch cannot write its marker there: ${errnoWords(error as NodeJS.ErrnoException, root)}`);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Another writer's marker on its way in (see writeMarker): not a sign that the folder holds anything. */
function isMarkerTemp(name: string): boolean {
  return name.startsWith(`.${MARKER_FILE}.`) && name.endsWith(".tmp");
}

/**
 * What a `reqwatch.json` at `file` is: reqwatch's marker (a small JSON file that says so), some
 * other file of that name, or none. One look: a marker appears whole (linked in) and never changes.
 */
function markerAt(file: string): "reqwatch" | "other" | "none" {
  const read = readSmallJson(file, { maxBytes: 4096, links: "refuse", shape: (json) => (jsonObject(json)?.reqwatch === "state directory" ? true : undefined) });
  return "missing" in read ? "none" : "value" in read ? "reqwatch" : "other";
}

function isMarker(file: string): boolean {
  return markerAt(file) === "reqwatch";
}

/**
 * Decide whether reqwatch manages or observes the state directory at `root`, and where its own
 * files live. Managed: a folder with the marker; one an earlier reqwatch made (it holds index.db,
 * archive.db or results/; the marker is added); and, for a writer's open (`create`: the library,
 * CLI commands that record), a missing folder (made) or an empty one. Anything else is observed,
 * with its index under the cache directory: another program's folder, and, for a reader, an empty
 * one (a gateway may have made it and not written yet).
 */
export function openStateDir(root: string, options: OpenStateDirOptions): { dir: StateDir; ownership: Ownership } {
  const absolute = path.resolve(/*turbopackIgnore: true*/ root);
  const creates = options.create && !options.readOnly;
  const stat = checkReachable(absolute, { create: creates });
  if (!stat) {
    if (!creates) {
      throw new ReqwatchError("NOT_FOUND", `The state directory ${absolute} does not exist.`, { stateDir: absolute });
    }
    writeMarker(absolute, "created", options.now());
    return managed(absolute, "reqwatch created this folder", options.ipcDir);
  }
  if (options.readOnly) {
    return observed(
      absolute,
      options.cacheDir,
      options.ipcDir,
      "it was opened read-only",
      "open it without read-only (unset REQWATCH_READ_ONLY; drop the dashboard's --read-only or the option readOnly)",
    );
  }
  const markerFile = path.join(absolute, MARKER_FILE);
  const marker = markerAt(markerFile);
  if (marker === "reqwatch") return managed(absolute, "reqwatch created or adopted this folder (it holds reqwatch.json)", options.ipcDir);
  const toAdopt = `run \`reqwatch adopt --state-dir ${absolute}\``;
  if (marker === "other") {
    return observed(absolute, options.cacheDir, options.ipcDir, "it holds a reqwatch.json that is not reqwatch's marker", toAdopt);
  }
  if (EARLIER_SIGNS.some((name) => statOrNull(path.join(absolute, name)) !== null)) {
    writeMarker(absolute, "made by an earlier reqwatch", options.now());
    return managed(absolute, "an earlier reqwatch made this folder (it holds index.db)", options.ipcDir);
  }
  let entries: string[];
  try {
    entries = fs.readdirSync(absolute).filter((name) => !isMarkerTemp(name));
  } catch (error) {
    throw new ReqwatchError("IO_ERROR", `Cannot read the state directory ${absolute}: ${(error as Error).message}`);
  }
  // A writer links its marker before it writes anything else: what it wrote since the first look means the marker is there now.
  if (entries.length > 0 && isMarker(markerFile)) return managed(absolute, "reqwatch created or adopted this folder (it holds reqwatch.json)", options.ipcDir);
  const empty = entries.length === 0;
  if (empty && options.create) {
    writeMarker(absolute, "adopted while empty", options.now());
    if (!isMarker(markerFile)) {
      return observed(absolute, options.cacheDir, options.ipcDir, "it holds a reqwatch.json that is not reqwatch's marker", toAdopt);
    }
    return managed(absolute, "the folder was empty when reqwatch first recorded into it", options.ipcDir);
  }
  if (empty) {
    return observed(
      absolute,
      options.cacheDir,
      options.ipcDir,
      "the folder is empty and holds no reqwatch marker; reqwatch takes it as its own when it first records into it",
      toAdopt,
    );
  }
  return observed(
    absolute,
    options.cacheDir,
    options.ipcDir,
    "reqwatch did not create this folder: it holds files and no reqwatch marker (reqwatch.json)",
    toAdopt,
  );
}

function managed(root: string, reason: string, ipcDir: string | undefined) {
  return { dir: stateDirAt(root, root, resolveIpcDir(ipcDir, root)), ownership: { access: "managed" as const, reason } };
}

function observed(root: string, cacheDir: string, ipcDir: string | undefined, reason: string, toWrite: string) {
  return { dir: stateDirAt(root, observedStoreDir(root, cacheDir), resolveIpcDir(ipcDir, root)), ownership: { access: "observed" as const, reason, toWrite } };
}

/**
 * Let reqwatch manage a folder another program writes: write its marker. From then on reqwatch
 * keeps its index, archive and result markers there, and the dashboard's actions rewrite request
 * files under its writers' lock, which the other program does not take (docs/SOURCES.md).
 * Returns false when the folder was reqwatch's already.
 */
export function adoptStateDir(root: string, now: number = Date.now()): boolean {
  const absolute = path.resolve(/*turbopackIgnore: true*/ root);
  const stat = checkReachable(absolute, { create: false });
  if (!stat) throw new ReqwatchError("NOT_FOUND", `The state directory ${absolute} does not exist.`, { stateDir: absolute });
  const writable = accessProblem(absolute, true);
  if (writable) throw unusable(absolute, writable);
  const markerFile = path.join(absolute, MARKER_FILE);
  const marker = markerAt(markerFile);
  if (marker === "reqwatch") return false;
  if (marker === "other") throw new ReqwatchError("ALREADY_EXISTS", `${markerFile} exists and is not reqwatch's marker; move it away first.`);
  writeMarker(absolute, "adopted", now);
  return true;
}

/** The one check before reqwatch writes anything into the state directory. */
export function assertManaged(ctx: { dir: StateDir; ownership: Ownership }, what = "Writing"): void {
  if (ctx.ownership.access === "managed") return;
  throw new ReqwatchError(
    "READ_ONLY",
    `${what} is refused: ${ctx.dir.root} is observed read-only (${ctx.ownership.reason}). Nothing was changed. ` +
      `To let reqwatch write there, ${ctx.ownership.toWrite}.`,
  );
}
