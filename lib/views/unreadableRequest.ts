import type { UnreadableFile } from "../db/unreadableFiles";
import { ReqwatchError } from "../model/errors";
import type { Reader } from "../roles/reader";

/** The file a request id would be read from, when the index found it and could not read it. */
export function unreadableRequest(reader: Pick<Reader, "unreadableFiles">, requestId: string): UnreadableFile | undefined {
  const file = `requests/${requestId}.json`;
  return reader.unreadableFiles().find((unreadable) => unreadable.file === file);
}

/**
 * Why a request is missing from the index: its file is there and cannot be read, or there is none.
 * Never "does not exist" for a file on disk: the reason says the file, and the line and column where
 * JSON stops parsing.
 */
export function missingRequestError(reader: Pick<Reader, "unreadableFiles">, requestId: string): ReqwatchError {
  const unreadable = unreadableRequest(reader, requestId);
  if (!unreadable) return new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist (it may have been cleaned up).`);
  return new ReqwatchError(
    "CORRUPT_FILE",
    `Request ${requestId} cannot be read: ${unreadable.file}: ${unreadable.reason}. The file is kept as it is; once it is fixed (or moved away) reqwatch reads it again.`,
    { ...unreadable },
  );
}

/** The note a list ends with on stderr while some request files cannot be read: they are in no list. */
export function unreadableNote(files: readonly UnreadableFile[], shown = 5): string[] {
  const requests = files.filter((file) => file.file.startsWith("requests/"));
  if (!requests.length) return [];
  const more = requests.length - shown;
  return [
    `${requests.length} request file${requests.length === 1 ? "" : "s"} cannot be read, so ${requests.length === 1 ? "it is" : "they are"} in no list (kept as ${requests.length === 1 ? "it is" : "they are"}):`,
    ...requests.slice(0, shown).map((file) => `  ${file.file}: ${file.reason}`),
    ...(more > 0 ? [`  and ${more} more (reqwatch recover lists every one)`] : []),
  ];
}
