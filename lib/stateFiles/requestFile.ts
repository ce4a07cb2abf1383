import { ReqwatchError } from "../model/errors";
import { fingerprintOf, isSameFile, type FileFingerprint } from "../fs/fingerprint";
import { readRegularFile } from "../fs/readRegularFile";
import { jsonStructureProblem } from "../model/jsonStructure";
import { describeZodError, requestSchema, type RequestRecord } from "../model/requestFormat";
import { lazily } from "../model/lazily";

/** Files larger than this are reported, not parsed: one bad file must not take the process's memory. */
export const MAX_REQUEST_FILE_BYTES = 64 * 1024 * 1024;

function corrupt(name: string, reason: string): ReqwatchError {
  return new ReqwatchError("CORRUPT_FILE", `requests/${name}: ${reason}`, { file: `requests/${name}`, reason });
}

/** The request file format this code reads and writes; a file may say so in `formatVersion`. */
const REQUEST_FORMAT_VERSION = 1;

/** JSON.parse's message without the copy of the file's text some versions append. */
function describeJsonError(error: Error): string {
  return error.message.replace(/, "[\s\S]*" is not valid JSON$/, "").slice(0, 200);
}

/** Fields a file may leave out: another program may write `null` for "not set" instead (`"completedAt": null`). */
const optionalFields = lazily(
  () =>
    new Set(
      Object.entries(requestSchema().shape)
        .filter(([, field]) => field.safeParse(undefined).success)
        .map(([key]) => key),
    ),
);

/** The request with its optional fields that are `null` left out: read as not set, never as unreadable. */
function withoutNullOptionals(raw: Record<string, unknown>): Record<string, unknown> {
  if (!Object.entries(raw).some(([key, value]) => value === null && optionalFields().has(key))) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([key, value]) => !(value === null && optionalFields().has(key) && key !== "claim")));
}

/**
 * Parse and validate the text of a request file. Throws CORRUPT_FILE with one line a person can act
 * on; `details.reason` is that line without the file name.
 */
export function parseRequestText(text: string, expectedId: string): RequestRecord {
  const name = `${expectedId}.json`;
  if (text.trim() === "") throw corrupt(name, "the file is empty");
  if (text.startsWith("\uFEFF")) throw corrupt(name, "starts with a byte-order mark (BOM); save it as UTF-8 without one");
  if (text.startsWith("\uFFFD\uFFFD") || (text.charCodeAt(0) > 0 && text.charCodeAt(0) < 0x80 && text.charCodeAt(1) === 0))
    throw corrupt(name, "is UTF-16, not UTF-8; save it as UTF-8");
  if (text.includes("\0")) throw corrupt(name, "contains NUL bytes: not a JSON text file");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof RangeError ? "nested too deeply" : describeJsonError(error as Error);
    throw corrupt(name, `invalid JSON (${detail})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw corrupt(name, "expected a JSON object");
  }
  const structure = jsonStructureProblem(text);
  if (structure) throw corrupt(name, structure);
  const formatVersion = (raw as { formatVersion?: unknown }).formatVersion;
  if (formatVersion !== undefined && formatVersion !== REQUEST_FORMAT_VERSION) {
    throw corrupt(
      name,
      `written in format version ${JSON.stringify(formatVersion).slice(0, 40)}; this reqwatch reads version ${REQUEST_FORMAT_VERSION} (upgrade reqwatch)`,
    );
  }
  const parsed = requestSchema().safeParse(withoutNullOptionals(raw as Record<string, unknown>));
  if (!parsed.success) throw corrupt(name, describeZodError(parsed.error));
  if (parsed.data.requestId !== expectedId) {
    throw corrupt(name, `the file name says '${expectedId}' but requestId is '${parsed.data.requestId}'`);
  }
  return parsed.data;
}

/**
 * Read one request file without following a symlink. Returns null when there is no file;
 * throws CORRUPT_FILE for anything that is there but unusable.
 */
export function readRequestFile(file: string, expectedId: string): { request: RequestRecord; fingerprint: FileFingerprint } | null {
  for (let tries = 1; ; tries++) {
    const read = readRegularFile(file, { maxBytes: MAX_REQUEST_FILE_BYTES, links: "refuse" });
    if ("missing" in read) return null;
    if ("problem" in read) throw corrupt(`${expectedId}.json`, read.problem);
    const fingerprint = fingerprintOf(read.stat);
    try {
      return { request: parseRequestText(read.text, expectedId), fingerprint };
    } catch (error) {
      // Replaced while it was read, and the old inode rewritten as another writer's temp file
      // (lib/fs/durableWrite.ts, spares): what was read is not the file; the file now is read.
      if (tries >= REREADS || isSameFile(file, fingerprint)) throw error;
    }
  }
}

/** Reads of a request file replaced while it was read, before its content is taken as what the file holds. */
const REREADS = 5;

/** The file's text; refused (BAD_INPUT, nothing written) when it would be too big for any reader to read back. */
export function serializeRequest(request: RequestRecord): string {
  const text = `${JSON.stringify(request, null, 2)}\n`;
  // Length in UTF-16 units is at most the UTF-8 bytes; the exact count only near the limit.
  if (text.length * 3 > MAX_REQUEST_FILE_BYTES && Buffer.byteLength(text) > MAX_REQUEST_FILE_BYTES) {
    const mb = (Buffer.byteLength(text) / (1024 * 1024)).toFixed(1);
    throw new ReqwatchError(
      "BAD_INPUT",
      `Request ${request.requestId} would be ${mb} MB written out; reqwatch keeps a request file up to ${MAX_REQUEST_FILE_BYTES / (1024 * 1024)} MB. Nothing was written: keep long text elsewhere and record where.`,
    );
  }
  return text;
}
