import { randomUUID } from "../process/crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ReqwatchError } from "../model/errors";

/** Bytes handed on per chunk when the spool is read back. */
const CHUNK_BYTES = 256 * 1024;

/** Text written once and read back once, in chunks, from a private temporary file. */
export interface Spool {
  write(text: string): void;
  /** What was written, in order; each chunk a buffer of its own (a socket may hold it until sent). */
  chunks(): Generator<Buffer, void, undefined>;
  close(): void;
}

function spoolError(error: unknown): ReqwatchError {
  const code = (error as { code?: string }).code ?? "unknown";
  // No path: the message may reach a browser.
  return new ReqwatchError(
    code === "ENOSPC" ? "NO_SPACE" : "IO_ERROR",
    `The temporary folder cannot hold the export (${code}); set TMPDIR to a folder with room.`,
    undefined,
    { cause: error },
  );
}

/**
 * A spool in the system's temporary folder (TMPDIR): what must be read quickly (a snapshot of the
 * index) is written here, then handed on at its consumer's pace. Readable by this user only; its
 * name is removed as soon as it is open where the system allows (so a crash leaves nothing behind),
 * else at close.
 */
export function openSpool(): Spool {
  const file = path.join(os.tmpdir(), `reqwatch-spool-${process.pid}-${randomUUID()}.tmp`);
  let fd: number;
  try {
    fd = fs.openSync(file, "wx+", 0o600);
  } catch (error) {
    throw spoolError(error);
  }
  let named = true;
  try {
    fs.unlinkSync(file);
    named = false;
  } catch {
    // Windows keeps an open file's name until it is closed.
  }
  let size = 0;
  let closed = false;
  return {
    write(text) {
      const bytes = Buffer.from(text, "utf8");
      try {
        for (let at = 0; at < bytes.length;) at += fs.writeSync(fd, bytes, at, bytes.length - at, size + at);
      } catch (error) {
        throw spoolError(error);
      }
      size += bytes.length;
    },
    *chunks() {
      for (let at = 0; at < size;) {
        const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - at));
        const read = fs.readSync(fd, chunk, 0, chunk.length, at);
        if (read === 0) throw new ReqwatchError("IO_ERROR", "The export's temporary file ended early.");
        at += read;
        yield read === chunk.length ? chunk : chunk.subarray(0, read);
      }
    },
    close() {
      if (closed) return;
      closed = true;
      fs.closeSync(fd);
      if (named) fs.rmSync(file, { force: true });
    },
  };
}
