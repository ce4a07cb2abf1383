import fs from "node:fs";
import { errnoWords } from "../fs/errnoWords";
import { sleepSync } from "../process/sleepSync";
import { UsageError } from "./context";

/** The most a text field may take from a file or stdin: far past any prompt, short of exhausting memory. */
const TEXT_FILE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The text of `--<field>-file <file>`, `-` for stdin: for text past the kernel's limit on a command
 * line (a 1 MB prompt), or that should not be in the shell's history. Pipes are fine (`<(cmd)`).
 */
export function readTextArgument(file: string, flag: string): string {
  const refused = (error: unknown) => new UsageError(`${flag}: ${errnoWords(error as NodeJS.ErrnoException, file === "-" ? "stdin" : file)}.`);
  let fd: number;
  try {
    fd = file === "-" ? 0 : fs.openSync(file, "r");
  } catch (error) {
    throw refused(error);
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
        throw refused(error);
      }
      if (read === 0) break;
      total += read;
      if (total > TEXT_FILE_MAX_BYTES)
        throw new UsageError(`${flag} ${file}: more than ${TEXT_FILE_MAX_BYTES / (1024 * 1024)} MB; reqwatch keeps text up to that size.`);
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    if (fd !== 0) fs.closeSync(fd);
  }
}
