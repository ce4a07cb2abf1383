/** Machine-readable error codes. HTTP statuses for them live in `HTTP_STATUS` below, and only there. */
export const ERROR_CODES = [
  "BAD_INPUT",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "INVALID_TRANSITION",
  "CORRUPT_FILE",
  "LOCKED",
  "IO_ERROR",
  "NO_SPACE",
  "TOO_LARGE",
  "TIMEOUT",
  "FORBIDDEN",
  "METHOD_NOT_ALLOWED",
  "READ_ONLY",
  "NO_SQLITE",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  BAD_INPUT: 400,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  INVALID_TRANSITION: 409,
  CORRUPT_FILE: 422,
  LOCKED: 503,
  IO_ERROR: 500,
  NO_SPACE: 507,
  TOO_LARGE: 413,
  TIMEOUT: 504,
  FORBIDDEN: 403,
  METHOD_NOT_ALLOWED: 405,
  READ_ONLY: 403,
  NO_SQLITE: 500,
};

/**
 * Marks our errors across copies of this module. The dashboard server (dist/server.cjs) opens the
 * shared runtime with its own copy of lib/, and Next bundles lib/ into its server chunks again, so
 * an error thrown by the shared tracker is not `instanceof` the class a route imported;
 * `Symbol.for` is the same in all.
 */
const BRAND = Symbol.for("reqwatch.ReqwatchError");

/**
 * The one error type lib throws. `message` is written for a person and never contains a path
 * outside the state directory, so it is safe to show in the CLI and the browser.
 */
export class ReqwatchError extends Error {
  readonly [BRAND] = true;
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ReqwatchError";
    this.code = code;
    this.details = details;
  }
}

export function isReqwatchError(error: unknown, code?: ErrorCode): error is ReqwatchError {
  return (
    typeof error === "object" &&
    error !== null &&
    (error as { [BRAND]?: unknown })[BRAND] === true &&
    (code === undefined || (error as ReqwatchError).code === code)
  );
}

/** `waitForResult` gave up: the request did not finish within the time asked for. */
export class TimeoutError extends ReqwatchError {
  constructor(message: string, details?: Record<string, unknown>) {
    super("TIMEOUT", message, details);
    this.name = "TimeoutError";
  }
}

/** A failed write (file system or SQLite) as the error a caller can show: its code, no absolute path. */
export function asReqwatchError(error: unknown): ReqwatchError {
  if (isReqwatchError(error)) return error;
  const code = (error as { code?: string }).code;
  if (code === "SQLITE_BUSY") {
    return new ReqwatchError("LOCKED", "Another writer held the state directory's lock for too long; try again.", undefined, { cause: error });
  }
  // The request file's write (ENOSPC) or the index's (SQLite's own code for the same).
  if (code === "ENOSPC" || code === "SQLITE_FULL") {
    return new ReqwatchError("NO_SPACE", "The disk is full; nothing was changed.", undefined, { cause: error });
  }
  // System errors name absolute paths; say only what failed, so the message is safe to show anywhere.
  const syscall = (error as { syscall?: string }).syscall;
  const what = code ? `${syscall ?? "I/O"} ${code}` : ((error as Error)?.message ?? String(error));
  return new ReqwatchError("IO_ERROR", `The write failed (${what}); nothing was changed.`, undefined, { cause: error });
}
