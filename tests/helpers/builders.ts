import fs from "node:fs";
import path from "node:path";
import type { State } from "../../lib/model/states";

/**
 * Test data builders: request files written straight to disk, as another tool (or an older
 * tracker) would leave them. Named scenarios read like the cases they test.
 */
const HOUR = 60 * 60 * 1000;

export interface RawRequest {
  requestId: string;
  workspace: string;
  state: State;
  createdAt: number;
  lastUpdatedAt: number;
  [key: string]: unknown;
}

export function writeRequestFile(stateDir: string, request: Record<string, unknown> & { requestId: string }): string {
  const dir = path.join(stateDir, "requests");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${request.requestId}.json`);
  fs.writeFileSync(file, JSON.stringify(request, null, 2));
  return file;
}

export function aRequest(overrides: Partial<RawRequest> & { requestId: string }, now = Date.now()): RawRequest {
  return { workspace: "ws", state: "created", createdAt: now - 1000, lastUpdatedAt: now - 1000, ...overrides };
}

/** As a chat gateway's own request tracker writes it: no version, claim or transitions; a numeric chatId; a field we do not know. */
export function aGatewayRequest(requestId: string, now = Date.now()): RawRequest {
  return {
    requestId,
    chatId: 123456789,
    workspace: "gateway",
    state: "processing",
    previousState: "queued",
    createdAt: now - 5000,
    queuedAt: now - 4000,
    processingStartedAt: now - 3000,
    lastUpdatedAt: now - 3000,
    prompt: "summarise the repo",
    model: "claude-sonnet",
    timedOut: false,
    callback: { success: false, attempts: 1, retryTimestamps: ["2026-02-07T10:00:00Z"] },
    gatewayHost: "builder-7",
  };
}

/** Processing long past the processing stuck threshold with no worker holding it: recovery times it out. */
export function aStuckProcessingRequest(requestId: string, now = Date.now()): RawRequest {
  return aRequest(
    { requestId, state: "processing", processingStartedAt: now - 2 * HOUR, lastUpdatedAt: now - 2 * HOUR, createdAt: now - 2 * HOUR - 1000 },
    now,
  );
}

/** Finished long enough ago for the default 24 h cleanup. */
export function anOldCompletedRequest(requestId: string, now = Date.now()): RawRequest {
  return aRequest({ requestId, state: "completed", createdAt: now - 30 * HOUR, completedAt: now - 25 * HOUR, lastUpdatedAt: now - 25 * HOUR }, now);
}

/** A request already in `state`, as the tracker would have left it. */
export function aRequestIn(state: State, requestId: string, now = Date.now()): RawRequest {
  return aRequest({ requestId, state, version: 3 }, now);
}

export interface ClaimShape {
  token: string;
  pid: number;
  host?: string;
  processStartedAt?: number;
  claimedAt: number;
  heartbeatAt: number;
}

/** A request a worker claimed: `processing`, with the claim recorded as claimNext writes it. */
export function aClaimedRequest(requestId: string, claim: ClaimShape, extra: Partial<RawRequest> = {}): RawRequest {
  return aRequest({
    requestId,
    state: "processing",
    previousState: "queued",
    attempt: 1,
    processingStartedAt: claim.claimedAt,
    lastUpdatedAt: claim.claimedAt,
    createdAt: claim.claimedAt - 1000,
    version: 3,
    claim,
    transitions: [
      { from: null, to: "created", at: claim.claimedAt - 1000 },
      { from: "created", to: "queued", at: claim.claimedAt - 900 },
      { from: "queued", to: "processing", at: claim.claimedAt, reason: "claimed", token: claim.token },
    ],
    ...extra,
  });
}
