import { randomBytes } from "../process/crypto";
import fs from "node:fs";
import path from "node:path";
import { lazily } from "../model/lazily";

/** Our temp files: hidden, named after the target and the writing pid, ending in `.tmp`. */
export const OWN_TEMP_PATTERN = /^\.[A-Za-z0-9_-]+\.json\.(\d+)\.[0-9a-f]{8,}\.tmp$/;

// Unique per process (random prefix) and per write (counter), without a call into the random source
// each time; made at the first write, so a process that writes nothing never loads node:crypto.
const processTag = lazily(() => randomBytes(3).toString("hex"));
let written = 0;

interface TempFile {
  path: string;
  /** The temp's stat; a rename keeps its inode, size and mtime, so it is the target's once in place. */
  stat: fs.Stats;
}

function tempNameFor(file: string): string {
  // Never wraps: a spare may outlive many writes, and a new temp must not collide with it.
  written += 1;
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${processTag()}${written.toString(16).padStart(2, "0")}.tmp`);
}

/**
 * Inodes kept for reuse, a few per folder. Every write makes a temp file and its rename frees the
 * version it replaces; on some file systems creating a file then scans past every inode freed in
 * the last few seconds, so the cost of a create grows with the write rate (docs/PERFORMANCE.md,
 * "The write tail", has the figures). A writer keeps the version it replaces (a hard link made under the writers' lock, before the rename) and
 * rewrites it as its next temp file. A spare is a temp file like any other (hidden, `.tmp`, named
 * after its pid), so a crash leaves nothing the sweep does not remove.
 */
const SPARES_PER_FOLDER = 4;
const spares = new Map<string, string[]>();

/** The spares of `dir`'s pool, when it has room for one more; null when it is full. */
function poolWithRoom(dir: string): string[] | null {
  let kept = spares.get(dir);
  if (!kept) spares.set(dir, (kept = []));
  return kept.length < SPARES_PER_FOLDER ? kept : null;
}

/**
 * Before `file` is replaced: keep its inode as a spare for a later write in the same folder. Call
 * it right before the rename (under the writers' lock where there is one); if the rename then
 * fails, `dropSpare` the returned name. A spare is only ever rewritten while it is the inode's one
 * link, so two writers that kept the same version never share it. Null when the file does not
 * exist or the folder has its spares already.
 */
export function keepReplaced(file: string): string | null {
  const kept = poolWithRoom(path.dirname(file));
  if (!kept) return null;
  const spare = tempNameFor(file);
  try {
    fs.linkSync(file, spare);
  } catch {
    return null; // No file to keep (a create), or a file system without hard links.
  }
  kept.push(spare);
  return spare;
}

/** Forget and remove a spare (its rename failed, so it is still a link to the live file). */
function dropSpare(spare: string): void {
  const kept = spares.get(path.dirname(spare));
  kept?.splice(kept.indexOf(spare) >>> 0, 1);
  fs.rmSync(spare, { force: true });
}

/**
 * Rename `temp` over `file`, keeping the version it replaces as a spare (`keepReplaced`); a
 * failed rename leaves no spare linked to the live file. Both of our renames go through here.
 */
export function replaceKeepingSpare(temp: string, file: string): void {
  const spare = keepReplaced(file);
  try {
    fs.renameSync(temp, file);
  } catch (error) {
    if (spare) dropSpare(spare);
    throw error;
  }
}

/** Keep a file that is no longer wanted (a result marker once applied) as a spare, or remove it. */
export function retireFile(file: string): void {
  const kept = poolWithRoom(path.dirname(file));
  if (kept) {
    const spare = tempNameFor(file);
    try {
      fs.renameSync(file, spare);
      kept.push(spare);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    }
  }
  fs.rmSync(file, { force: true });
}

/** Remove this process's spares (a tracker closing). */
export function discardSpares(): void {
  for (const kept of spares.values()) for (const spare of kept.splice(0)) fs.rmSync(spare, { force: true });
  // A top-up still to come finds no pool, and makes none.
  spares.clear();
}

const toppingUp = new Set<string>();
/** Per folder, the writes that found no spare: a process that creates once (a script, a hook) is left alone. */
const withoutSpare = new Map<string, number>();

/**
 * After the second write in a folder that found no spare (creates, most often): fill its pool with
 * new empty files, on a later turn of the event loop, so that the next creates rewrite an inode that
 * exists instead of paying for a new one inside the write. Nothing durable is needed of a spare: its
 * content is written and fsynced when it is used.
 */
function topUpLater(dir: string): void {
  const missed = (withoutSpare.get(dir) ?? 0) + 1;
  withoutSpare.set(dir, missed);
  if (missed < 2 || toppingUp.has(dir)) return;
  toppingUp.add(dir);
  setImmediate(() => {
    toppingUp.delete(dir);
    const kept = spares.get(dir);
    try {
      while (kept && kept.length < SPARES_PER_FOLDER) {
        const spare = tempNameFor(path.join(dir, "spare.json"));
        fs.closeSync(fs.openSync(spare, "wx", 0o644));
        kept.push(spare);
      }
    } catch {
      // The folder went, or is full: the next write creates its own file.
    }
  });
}

/**
 * Open a spare of `dir` for writing. Its link count must be 1: a spare still linked to a live file
 * (a rename that failed after `keepReplaced`) is never written. Null when none is usable. The old
 * content is overwritten in place and cut to the new length after (emptying it first would free
 * its blocks only to allocate them again).
 */
function openSpare(dir: string): { path: string; fd: number; size: number } | null {
  const kept = spares.get(dir);
  for (let spare = kept?.pop(); spare !== undefined; spare = kept?.pop()) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(spare, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW);
      const stat = fs.fstatSync(fd);
      if (stat.nlink === 1) return { path: spare, fd, size: stat.size };
    } catch {
      // Gone (a sweep removed it): try the next, or create.
    }
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(spare, { force: true });
  }
  return null;
}

/**
 * Write `data` to a temp file beside `file` (a spare of this process, or a new file opened with
 * O_EXCL, so nothing planted there is followed), and fsync it unless `fsync: false`. Nothing is
 * visible at `file` until the rename.
 */
export function writeTempFile(file: string, data: string | Uint8Array, options: { fsync?: boolean } = {}): TempFile {
  const buffer = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const {
    path: temp,
    fd,
    size,
  } = openSpare(path.dirname(file)) ??
  (() => {
    const created = tempNameFor(file);
    const opened = { path: created, fd: fs.openSync(created, "wx", 0o644), size: 0 };
    topUpLater(path.dirname(file));
    return opened;
  })();
  try {
    let offset = 0;
    while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset, buffer.length - offset, offset);
    if (size > buffer.length) fs.ftruncateSync(fd, buffer.length);
    if (options.fsync ?? true) fs.fsyncSync(fd);
    return { path: temp, stat: fs.fstatSync(fd) };
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // Closed in the catch above.
    }
  }
}

/**
 * Replace `file` so that a crash at any instant leaves either the old content or the new, never a
 * torn file: temp file in the same folder, fsync, rename over the target (a rename replaces a
 * symlink rather than following it), fsync the folder. `fsync: false` keeps the atomicity (a killed
 * process leaves the old or the new file) but not the durability across a power cut: only for
 * files whose loss costs a re-run, never data (result markers). Returns the new file's stat.
 */
export function writeFileDurable(file: string, data: string | Uint8Array, options: { fsync?: boolean } = {}): fs.Stats {
  const temp = writeTempFile(file, data, options);
  try {
    replaceKeepingSpare(temp.path, file);
  } catch (error) {
    fs.rmSync(temp.path, { force: true });
    throw error;
  }
  if (options.fsync ?? true) fsyncDir(path.dirname(file));
  return temp.stat;
}

/** Make a rename or unlink in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
