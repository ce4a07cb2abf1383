import fs from "node:fs";
import path from "node:path";
import { errnoWords } from "./errnoWords";

/**
 * File systems the kernel makes up rather than stores: a folder there is no place for files that must
 * survive (and Node's recursive mkdir loops for ever under /proc). By statfs magic number.
 */
const KERNEL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x1cd1, "devpts"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x73636673, "securityfs"],
  [0xcafe4a11, "bpf"],
]);

/** Linux's limits: a whole path, and one name in it. */
const PATH_MAX_BYTES = 4095;
const NAME_MAX_BYTES = 255;

/** A folder path's problem in words ("is on proc, a file system the kernel makes up"), or null. */
type FolderProblem = string | null;

/** Whether `folder` (which exists) is on a kernel file system, and which. */
function kernelFileSystemOf(folder: string): string | null {
  try {
    return KERNEL_FILE_SYSTEMS.get(Number(fs.statfsSync(folder).type)) ?? null;
  } catch {
    return null;
  }
}

/** What is wrong with the path itself, before any file system is asked: too long, or a name too long. */
export function pathLengthProblem(absolute: string): FolderProblem {
  const bytes = Buffer.byteLength(absolute);
  if (bytes > PATH_MAX_BYTES) return `its path is too long (${bytes} bytes; the limit is ${PATH_MAX_BYTES + 1})`;
  const long = absolute.split(path.sep).find((name) => Buffer.byteLength(name) > NAME_MAX_BYTES);
  return long
    ? `the name ${JSON.stringify(`${long.slice(0, 24)}…`)} in its path is too long (${Buffer.byteLength(long)} bytes; the limit is ${NAME_MAX_BYTES})`
    : null;
}

/**
 * The closest folder at or above `absolute` that can be looked at, and the names below it still to
 * make (or that cannot be reached: the folder found then says why).
 */
export function nearestExisting(absolute: string): { existing: string; missing: string[] } {
  const missing: string[] = [];
  let at = absolute;
  for (;;) {
    try {
      fs.statSync(at);
      return { existing: at, missing };
    } catch {
      if (path.dirname(at) === at) return { existing: at, missing };
      missing.unshift(path.basename(at));
      at = path.dirname(at);
    }
  }
}

/** Why a process cannot use `folder` (which exists) for reading, or also writing: in a line, or null. */
export function accessProblem(folder: string, write: boolean): FolderProblem {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(folder);
  } catch (error) {
    return errnoWords(error as NodeJS.ErrnoException, folder);
  }
  if (!stat.isDirectory()) return `${folder} is a file, not a folder`;
  const kernel = kernelFileSystemOf(folder);
  if (kernel) return `${folder} is on ${kernel}, a file system the kernel makes up, not a folder on disk`;
  try {
    fs.accessSync(folder, write ? fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK : fs.constants.R_OK | fs.constants.X_OK);
    return null;
  } catch {
    const who = typeof process.getuid === "function" ? `; reqwatch runs as uid ${process.getuid()}` : "";
    return `no permission to ${write ? "write in" : "read"} ${folder} (owner uid ${stat.uid}, mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}${who})`;
  }
}

/**
 * Make `absolute` and the folders above it that are missing, one level at a time after checking the
 * closest one that exists: returns what stopped it, in a line, or null once the folder is there.
 */
export function makeFolder(absolute: string): FolderProblem {
  const long = pathLengthProblem(absolute);
  if (long) return long;
  const { existing, missing } = nearestExisting(absolute);
  const problem = accessProblem(existing, true);
  if (problem) return problem;
  let at = existing;
  for (const name of missing) {
    at = path.join(at, name);
    try {
      fs.mkdirSync(at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return errnoWords(error as NodeJS.ErrnoException, at);
    }
  }
  return null;
}
