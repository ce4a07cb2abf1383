import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { requestDetailView } from "../../lib/views/requestsView";
import { makeGatewayFolder, uuidv7, writeGatewayRequest, writeGatewayResponse } from "../helpers/gatewayFolder";
import { aRecording, tempParent } from "../helpers/stateDir";
import { treeSnapshot } from "../helpers/treeSnapshot";

describe("a gateway's response files beside its state folder", () => {
  it("are read for the request page and the callback-failed filter, followed live as workspaces and files appear, and never written", async () => {
    const gateway = makeGatewayFolder(tempParent(), { count: 60, stuckProcessing: 2 });
    const before = treeSnapshot(gateway.data);
    const { tracker, reader, upkeep } = aRecording({ stateDir: gateway.state });
    expect(reader.stateDir.ipcDir).toBe(gateway.ipc);

    // The last response file is a stop hook cut short: unreadable, so it is not counted as failed.
    const broken = gateway.responses.at(-1)!;
    const failed = gateway.responses
      .filter((r) => !r.callback.success && r !== broken)
      .map((r) => r.requestId)
      .sort();
    expect(failed.length).toBeGreaterThan(0);
    expect(
      tracker
        .list({ callbackFailed: true, limit: 1000 })
        .items.map((r) => r.requestId)
        .sort(),
    ).toEqual(failed);

    const ok = gateway.responses.find((r) => r.callback.success)!;
    expect(requestDetailView(reader, ok.requestId, [])?.response).toMatchObject({
      file: path.join("..", "ipc", ok.workspace, "responses", `${ok.requestId}.json`),
      status: "ok",
      response: { output: ok.output, exitCode: 0, callback: { success: true, attempts: 1 } },
    });
    expect(requestDetailView(reader, broken.requestId, [])?.response).toMatchObject({ status: "unreadable", reason: "invalid JSON (a write cut short?)" });
    const waiting = gateway.requests.find((r) => r.state === "queued")!;
    expect(requestDetailView(reader, waiting.requestId, [])?.response).toMatchObject({ status: "missing" });
    expect(reader.responseCounts()).toEqual({ files: gateway.responses.length, unreadable: 1, callbackFailed: failed.length });
    expect(treeSnapshot(gateway.data)).toEqual(before);

    // Live: a workspace folder that did not exist, and a response file replaced by rename.
    const ingest = upkeep.startIngest();
    await expect.poll(() => ingest.status().responses.ready).toBe(true);
    const now = Date.now();
    const late = {
      requestId: uuidv7(now),
      chatId: 1,
      workspace: "brand-new",
      state: "completed" as const,
      createdAt: now - 5000,
      queuedAt: now - 4000,
      processingStartedAt: now - 3000,
      completedAt: now - 1000,
      lastUpdatedAt: now - 1000,
      prompt: "late",
      timedOut: false,
    };
    writeGatewayRequest(gateway, late);
    const seqBefore = reader.feedLastSeq();
    writeGatewayResponse(gateway, {
      requestId: late.requestId,
      chatId: 1,
      workspace: "brand-new",
      timestamp: new Date().toISOString(),
      output: "late answer",
      exitCode: 0,
      callback: { success: false, attempts: 2, retryTimestamps: [], error: "502" },
    });
    await expect.poll(() => tracker.list({ callbackFailed: true, limit: 1000 }).items.map((r) => r.requestId), { timeout: 5000 }).toContain(late.requestId);
    expect(reader.changesSince(seqBefore).some((change) => change.kind === "response.changed" && change.requestId === late.requestId)).toBe(true);

    writeGatewayResponse(gateway, {
      ...gateway.responses.find((r) => r.requestId === failed[0])!,
      callback: { success: true, attempts: 4, retryTimestamps: [] },
    });
    await expect.poll(() => tracker.list({ callbackFailed: true, limit: 1000 }).items.map((r) => r.requestId), { timeout: 5000 }).not.toContain(failed[0]);
    expect(ingest.status().responses).toMatchObject({ mode: "following", error: null });
    ingest.stop();
  });

  it("are followed from the moment a fresh gateway's first stop hook creates the ipc folder, with no restart", async () => {
    const gateway = makeGatewayFolder(tempParent(), { count: 30, stuckProcessing: 0 });
    fs.rmSync(gateway.ipc, { recursive: true });
    const { tracker, reader, upkeep } = aRecording({ stateDir: gateway.state });
    const ingest = upkeep.startIngest();
    expect(ingest.status().responses).toMatchObject({ ipcDir: gateway.ipc, mode: "waiting" });
    const failedRequest = gateway.requests.find((r) => r.state === "failed")!;
    expect(requestDetailView(reader, failedRequest.requestId, [])?.response).toBeNull();

    // The stop hook makes data/ipc/<workspace>/responses/ and writes into it in one go.
    const response = {
      requestId: failedRequest.requestId,
      chatId: failedRequest.chatId,
      workspace: failedRequest.workspace,
      timestamp: new Date().toISOString(),
      output: "",
      exitCode: 1,
      callback: { success: false, attempts: 3, retryTimestamps: [], error: "chat service answered 502" },
    };
    writeGatewayResponse(gateway, response);
    await expect
      .poll(() => tracker.list({ callbackFailed: true, limit: 100 }).items.map((r) => r.requestId), { timeout: 10_000 })
      .toEqual([failedRequest.requestId]);
    expect(ingest.status().responses).toMatchObject({ mode: "following" });
    expect(requestDetailView(reader, failedRequest.requestId, [])?.response).toMatchObject({
      status: "ok",
      response: { callback: { success: false, attempts: 3 } },
    });

    // And what it writes later, live.
    const other = gateway.requests.find((r) => r.state === "completed" && r.workspace !== failedRequest.workspace)!;
    writeGatewayResponse(gateway, {
      requestId: other.requestId,
      chatId: other.chatId,
      workspace: other.workspace,
      timestamp: new Date().toISOString(),
      output: "ok",
      exitCode: 1,
      callback: { success: false, attempts: 2, retryTimestamps: [], error: "504" },
    });
    await expect.poll(() => tracker.list({ callbackFailed: true, limit: 100 }).items.length, { timeout: 10_000 }).toBe(2);
    ingest.stop();
  });
});
