import fs from "node:fs";

/** A file read whole, or why it was not, in words (`problem` follows the file's name: "x.json is a folder, ..."). */
type RegularFileRead =
  { text: string; stat: fs.Stats } | { missing: true } | { problem: string; reason: "link" | "not regular" | "too big" | "unreadable"; stat: fs.Stats | null };

export interface RegularFileOptions {
  /** Larger is refused, unread: one bad file must not take the process's memory. */
  maxBytes: number;
  /**
   * "refuse" for a file in a folder reqwatch reads as its own (a link could lead outside it);
   * "follow" for a path a person or another program named, which may well be a link.
   */
  links: "refuse" | "follow";
}

// Windows has none of these flags; the stat before the open is its only guard there.
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;
const O_NOCTTY = fs.constants.O_NOCTTY ?? 0;
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

const LINK = "is a symbolic link; links are not followed";

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${bytes} bytes`;
}

/** What a path that is not a regular file is, as a person says it. */
function kindOf(stat: fs.Stats): string | null {
  if (stat.isFIFO()) return "a FIFO (a named pipe)";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isDirectory()) return "a folder";
  if (stat.isSocket()) return "a socket";
  return null;
}

function refused(stat: fs.Stats): RegularFileRead | null {
  if (stat.isSymbolicLink()) return { problem: LINK, reason: "link", stat };
  if (stat.isFile()) return null;
  const kind = kindOf(stat);
  return { problem: kind ? `is ${kind}, not a regular file` : "is not a regular file", reason: "not regular", stat };
}

function tooBig(size: number, maxBytes: number, stat: fs.Stats): RegularFileRead {
  // Just over the limit, the rounded figures would read the same: then in bytes.
  const [said, limit] = formatBytes(size) === formatBytes(maxBytes) ? [`${size} bytes`, `${maxBytes} bytes`] : [formatBytes(size), formatBytes(maxBytes)];
  return { problem: `is ${said}, over the ${limit} limit`, reason: "too big", stat };
}

function cannotRead(error: unknown, stat: fs.Stats | null, links: RegularFileOptions["links"]): RegularFileRead {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return { missing: true };
  // The open refused a link that replaced the file since the lstat.
  if (code === "ELOOP" && links === "refuse") return { problem: LINK, reason: "link", stat };
  return { problem: `cannot be read (${code === "EACCES" ? "permission denied" : (code ?? (error as Error).message)})`, reason: "unreadable", stat };
}

/**
 * The one way reqwatch reads a file it did not write this moment, as UTF-8: only a regular file of
 * at most `maxBytes`. A FIFO would block the one thread that serves every page, and a device would
 * be read until memory runs out: neither is read. The stat before the open keeps devices closed;
 * the open does not wait for a FIFO's writer nor follow a link when links are refused; the fstat
 * after it checks what was opened, in case the path was swapped in between.
 */
export function readRegularFile(file: string, options: RegularFileOptions): RegularFileRead {
  const { maxBytes, links } = options;
  let stat: fs.Stats;
  try {
    stat = links === "refuse" ? fs.lstatSync(file) : fs.statSync(file);
  } catch (error) {
    return cannotRead(error, null, links);
  }
  const before = refused(stat);
  if (before) return before;
  if (stat.size > maxBytes) return tooBig(stat.size, maxBytes, stat);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | O_NONBLOCK | O_NOCTTY | (links === "refuse" ? O_NOFOLLOW : 0));
  } catch (error) {
    return cannotRead(error, stat, links);
  }
  try {
    const opened = fs.fstatSync(fd);
    const swapped = refused(opened);
    if (swapped) return swapped;
    if (opened.size > maxBytes) return tooBig(opened.size, maxBytes, opened);
    // Sized to the file, with a byte to spare to see that it grew since the fstat; grown, up to one byte past the limit.
    let buffer = Buffer.allocUnsafe(opened.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) return tooBig(Math.max(length, fs.fstatSync(fd).size), maxBytes, opened);
        const larger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const wanted = buffer.length - length;
      const read = fs.readSync(fd, buffer, length, wanted, null);
      length += read;
      // A regular file's read comes back short only at its end: no second read to learn that.
      if (read === 0 || (read < wanted && length >= opened.size)) return { text: buffer.toString("utf8", 0, length), stat: opened };
    }
  } catch (error) {
    return cannotRead(error, stat, links);
  } finally {
    fs.closeSync(fd);
  }
}
