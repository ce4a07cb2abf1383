import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * A data folder as a chat gateway with its own request tracker leaves it, written
 * the way it writes (no reqwatch code in it): `data/state/requests/<id>.json` (UUIDv7 ids, two-space
 * JSON without a trailing newline, epoch-millisecond times), a copy under
 * `requests/by-workspace/<ws>/`, each written to `<name>.tmp` and renamed; and its stop hook's
 * response files `data/ipc/<ws>/responses/<id>.json`. It never writes model, tokens, exitCode,
 * output, callback, timeoutAt, version, claim or transitions into a state file.
 */
export interface GatewayRequest {
  requestId: string;
  chatId: number;
  workspace: string;
  state: "created" | "queued" | "processing" | "completed" | "failed" | "timeout";
  previousState?: string;
  createdAt: number;
  queuedAt?: number;
  processingStartedAt?: number;
  completedAt?: number;
  lastUpdatedAt: number;
  prompt: string;
  timedOut: boolean;
  /** What a failed request's last attempt said. */
  error?: string;
}

export interface GatewayResponse {
  requestId: string;
  chatId: number;
  workspace: string;
  timestamp: string;
  output: string;
  exitCode: number;
  callback: { success: boolean; attempts: number; retryTimestamps: string[]; error?: string };
}

export interface GatewayFolder {
  /** `<parent>/data`. */
  data: string;
  /** `<data>/state`: what reqwatch is pointed at. */
  state: string;
  /** `<data>/ipc`. */
  ipc: string;
  requests: GatewayRequest[];
  responses: GatewayResponse[];
}

/** A UUIDv7: 48 bits of milliseconds, then random bits with the version and variant set. */
export function uuidv7(ms: number): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The gateway's own write: `<file>.tmp`, then a rename over the file. */
export function gatewayWrite(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(value, null, 2));
  fs.renameSync(`${file}.tmp`, file);
}

export function writeGatewayRequest(folder: Pick<GatewayFolder, "state">, request: GatewayRequest): void {
  gatewayWrite(path.join(folder.state, "requests", `${request.requestId}.json`), request);
  gatewayWrite(path.join(folder.state, "requests", "by-workspace", request.workspace, `${request.requestId}.json`), request);
}

export function writeGatewayResponse(folder: Pick<GatewayFolder, "ipc">, response: GatewayResponse): void {
  gatewayWrite(path.join(folder.ipc, response.workspace, "responses", `${response.requestId}.json`), response);
}

const WORKSPACES = ["main", "nightly", "support"] as const;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * A gateway's data folder under `parent`: `count` requests over the last day in every state,
 * `stuckProcessing` of them processing for hours, response files for the finished ones (every fifth with a
 * failed callback delivery, one unreadable), and a leftover `.tmp` from a crashed write.
 */
export function makeGatewayFolder(parent: string, options: { count?: number; stuckProcessing?: number; now?: number } = {}): GatewayFolder {
  const now = options.now ?? Date.now();
  const count = options.count ?? 200;
  const stuckProcessing = options.stuckProcessing ?? 5;
  const data = path.join(parent, "data");
  const folder: GatewayFolder = { data, state: path.join(data, "state"), ipc: path.join(data, "ipc"), requests: [], responses: [] };
  for (let i = 0; i < count; i++) {
    const workspace = WORKSPACES[i % WORKSPACES.length]!;
    const createdAt = now - Math.round(((i + 1) / count) * 20 * HOUR);
    const queuedAt = createdAt + 200;
    const processingStartedAt = queuedAt + 1500;
    const base = { requestId: uuidv7(createdAt), chatId: 100000 + i, workspace, createdAt, prompt: `question ${i} for ${workspace}`, timedOut: false };
    let request: GatewayRequest;
    if (i < stuckProcessing) {
      const started = now - (2 + i) * HOUR;
      request = {
        ...base,
        createdAt: started - 2000,
        queuedAt: started - 1000,
        state: "processing",
        previousState: "queued",
        processingStartedAt: started,
        lastUpdatedAt: started,
      };
    } else if (i % 10 === 9) {
      request = { ...base, state: "queued", previousState: "created", queuedAt, lastUpdatedAt: queuedAt };
    } else if (i % 10 === 8) {
      request = {
        ...base,
        state: "failed",
        previousState: "processing",
        queuedAt,
        processingStartedAt,
        completedAt: processingStartedAt + 4000,
        lastUpdatedAt: processingStartedAt + 4000,
      };
    } else {
      const completedAt = processingStartedAt + 3000 + (i % 7) * 1000;
      request = { ...base, state: "completed", previousState: "processing", queuedAt, processingStartedAt, completedAt, lastUpdatedAt: completedAt };
    }
    folder.requests.push(request);
    writeGatewayRequest(folder, request);
    if (request.state === "completed" || request.state === "failed") {
      const success = i % 5 !== 0;
      const response: GatewayResponse = {
        requestId: request.requestId,
        chatId: request.chatId,
        workspace,
        timestamp: new Date(request.completedAt!).toISOString(),
        output: request.state === "completed" ? `answer ${i}` : "",
        exitCode: request.state === "completed" ? 0 : 1,
        callback: success
          ? { success: true, attempts: 1, retryTimestamps: [] }
          : {
              success: false,
              attempts: 3,
              retryTimestamps: [new Date(request.completedAt! + 1000).toISOString(), new Date(request.completedAt! + 5000).toISOString()],
              error: "chat service answered 502",
            },
      };
      folder.responses.push(response);
      writeGatewayResponse(folder, response);
    }
  }
  // A crashed write: the gateway's own temp file, left behind.
  const last = folder.requests.at(-1)!;
  fs.writeFileSync(path.join(folder.state, "requests", `${last.requestId}.json.tmp`), JSON.stringify(last, null, 2).slice(0, 40));
  // A stop hook cut short: an unreadable response file.
  const broken = folder.responses.at(-1)!;
  fs.writeFileSync(path.join(folder.ipc, broken.workspace, "responses", `${broken.requestId}.json`), '{"requestId": "');
  return folder;
}
