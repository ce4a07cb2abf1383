import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "../ids";
import { fingerprintOf, type FileFingerprint } from "../requestFile";
import { callbackSchema, describeZodError } from "../schema";

/**
 * A response file: what the seed gateway's stop hook writes with jq once the model has answered,
 * into `<data>/ipc/<workspace>/responses/<requestId>.json`, beside the state folder. Read
 * leniently: every field may be missing; one of the wrong type makes the file unreadable, with why.
 */
export const responseSchema = z.looseObject({
  requestId: z.string().optional(),
  chatId: z.union([z.string(), z.number()]).optional(),
  workspace: z.string().optional(),
  /** ISO time of the response. */
  timestamp: z.string().optional(),
  output: z.string().optional(),
  exitCode: z.number().int().optional(),
  callback: callbackSchema.optional(),
});

export type ResponseRecord = z.infer<typeof responseSchema>;

/** Response files larger than this are reported, not read. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export type ResponseRead =
  | { status: "ok"; response: ResponseRecord; fingerprint: FileFingerprint }
  | { status: "unreadable"; reason: string; fingerprint: FileFingerprint | null };

/** `<ipc>/<workspace>/responses/<id>.json`, or null when the names cannot be a workspace and a request id. */
export function responseFilePath(ipcDir: string, workspace: string, requestId: string): string | null {
  if (!WORKSPACE_PATTERN.test(workspace) || !REQUEST_ID_PATTERN.test(requestId)) return null;
  return path.join(/*turbopackIgnore: true*/ ipcDir, workspace, "responses", `${requestId}.json`);
}

/** The workspace and request id a path under the ipc folder names, when it is a response file. */
export function responseOfPath(ipcDir: string, file: string): { workspace: string; requestId: string } | null {
  const parts = path.relative(ipcDir, file).split(path.sep);
  if (parts.length !== 3 || parts[1] !== "responses" || !parts[2]!.endsWith(".json")) return null;
  const workspace = parts[0]!;
  const requestId = parts[2]!.slice(0, -".json".length);
  return WORKSPACE_PATTERN.test(workspace) && REQUEST_ID_PATTERN.test(requestId) ? { workspace, requestId } : null;
}

/**
 * Read one response file without following a symlink: null when there is none, else the response
 * or why it cannot be read. Never throws for what is in the file.
 */
export function readResponseFile(file: string, requestId: string): ResponseRead | null {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    return { status: "unreadable", reason: `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`, fingerprint: null };
  }
  const fingerprint = fingerprintOf(stat);
  const bad = (reason: string): ResponseRead => ({ status: "unreadable", reason, fingerprint });
  if (stat.isSymbolicLink()) return bad("is a symbolic link; links are not followed");
  if (!stat.isFile()) return bad("is not a regular file");
  if (stat.size > MAX_RESPONSE_BYTES) return bad(`is over the ${MAX_RESPONSE_BYTES / 1024 / 1024} MB limit`);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    return bad(`cannot be read (${code ?? "error"})`);
  }
  if (text.trim() === "") return bad("the file is empty");
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    return bad("invalid JSON (a write cut short?)");
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return bad("expected a JSON object");
  const parsed = responseSchema.safeParse(raw);
  if (!parsed.success) return bad(describeZodError(parsed.error));
  if (parsed.data.requestId !== undefined && parsed.data.requestId !== requestId) return bad(`the file name says '${requestId}' but requestId is '${parsed.data.requestId}'`);
  return { status: "ok", response: parsed.data, fingerprint };
}
