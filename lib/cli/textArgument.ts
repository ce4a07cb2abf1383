import fs from "node:fs";
import { sleepSync } from "../process/sleepSync";
import { UsageError } from "./context";

/** The most a text field may take from a file or stdin: far past any prompt, short of exhausting memory. */
export const TEXT_FILE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The text of `--<field>-file <file>`, `-` for stdin: for text past the kernel's limit on a command
 * line (a 1 MB prompt), or that should not be in the shell's history. Pipes are fine (`<(cmd)`).
 */
export function readTextArgument(file: string, flag: string): string {
  let fd: number;
  try {
    fd = file === "-" ? 0 : fs.openSync(file, "r");
  } catch (error) {
    throw new UsageError(`${flag} ${file}: ${describe(error as NodeJS.ErrnoException)}.`);
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      let read: number;
      try {
        read = fs.readSync(fd, buffer, 0, buffer.length, null);
      } catch (error) {
        // A stdin left non-blocking by the shell has nothing yet: wait for it rather than fail.
        if ((error as NodeJS.ErrnoException).code === "EAGAIN") {
          sleepSync(5);
          continue;
        }
        throw new UsageError(`${flag} ${file}: ${describe(error as NodeJS.ErrnoException)}.`);
      }
      if (read === 0) break;
      total += read;
      if (total > TEXT_FILE_MAX_BYTES) throw new UsageError(`${flag} ${file}: more than ${TEXT_FILE_MAX_BYTES / (1024 * 1024)} MB; reqwatch keeps text up to that size.`);
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    if (fd !== 0) fs.closeSync(fd);
  }
}

function describe(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "ENOENT":
      return "no such file";
    case "EISDIR":
      return "is a folder, not a file";
    case "EACCES":
      return "permission denied";
    default:
      return error.message;
  }
}
