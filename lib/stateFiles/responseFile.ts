import path from "node:path";
import { z } from "zod";
import { readSmallJson } from "../fs/readSmallJson";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "../model/ids";
import { fingerprintOf, type FileFingerprint } from "../fs/fingerprint";
import { callbackSchema, describeZodError } from "../model/requestFormat";
import { lazily } from "../model/lazily";

/**
 * A response file: what a gateway's stop hook writes with jq once the model has answered,
 * into `<data>/ipc/<workspace>/responses/<requestId>.json`, beside the state folder. Read
 * leniently: every field may be missing; one of the wrong type makes the file unreadable, with why.
 */
const responseSchema = lazily(() =>
  z.looseObject({
    requestId: z.string().optional(),
    chatId: z.union([z.string(), z.number()]).optional(),
    workspace: z.string().optional(),
    /** ISO time of the response. */
    timestamp: z.string().optional(),
    output: z.string().optional(),
    exitCode: z.number().int().optional(),
    callback: callbackSchema().optional(),
  }),
);

export type ResponseRecord = z.infer<ReturnType<typeof responseSchema>>;

/** Response files larger than this are reported, not read. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

type ResponseRead =
  { status: "ok"; response: ResponseRecord; fingerprint: FileFingerprint } | { status: "unreadable"; reason: string; fingerprint: FileFingerprint | null };

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
  const read = readSmallJson(file, { maxBytes: MAX_RESPONSE_BYTES, links: "refuse" });
  if ("missing" in read) return null;
  const fingerprint = read.stat && fingerprintOf(read.stat);
  const bad = (reason: string): ResponseRead => ({ status: "unreadable", reason, fingerprint });
  if ("problem" in read)
    return bad(read.reason === "empty" ? "the file is empty" : read.reason === "not json" ? "invalid JSON (a write cut short?)" : read.problem);
  const raw = read.value;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return bad("expected a JSON object");
  const parsed = responseSchema().safeParse(raw);
  if (!parsed.success) return bad(describeZodError(parsed.error));
  if (parsed.data.requestId !== undefined && parsed.data.requestId !== requestId)
    return bad(`the file name says '${requestId}' but requestId is '${parsed.data.requestId}'`);
  return { status: "ok", response: parsed.data, fingerprint: fingerprintOf(read.stat) };
}
