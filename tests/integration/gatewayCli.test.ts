import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli";
import { makeGatewayFolder, writeGatewayRequest, writeGatewayResponse } from "../helpers/gatewayFolder";
import { tempParent } from "../helpers/stateDir";

/** The CLI on a gateway's own folder, as its users run it there. */
describe("the CLI on a gateway's data folder", () => {
  it("keeps a gateway's numeric chat ids numbers in list --json and --format jsonl, as get does", () => {
    const parent = tempParent();
    const gateway = makeGatewayFolder(parent, { count: 12, stuckProcessing: 1 });
    const env = { ...process.env, REQWATCH_CACHE_DIR: path.join(parent, "cache") };
    const byId = new Map(gateway.requests.map((r) => [r.requestId, r.chatId]));

    const page = JSON.parse(runCli(["list", "--json", "--limit", "100"], { stateDir: gateway.state, env }).stdout) as {
      items: { requestId: string; chatId: unknown }[];
    };
    expect(page.items).toHaveLength(12);
    for (const row of page.items) expect(row.chatId).toBe(byId.get(row.requestId));

    const lines = runCli(["list", "--format", "jsonl"], { stateDir: gateway.state, env })
      .stdout.trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { requestId: string; chatId: unknown });
    expect(lines).toHaveLength(12);
    for (const row of lines) expect(row.chatId).toBe(byId.get(row.requestId));

    const one = gateway.requests[3]!;
    expect(JSON.parse(runCli(["get", one.requestId], { stateDir: gateway.state, env }).stdout)).toMatchObject({ chatId: one.chatId });
  });

  it("explain prints a failed gateway request's error and its response file's failed callback", () => {
    const parent = tempParent();
    const gateway = makeGatewayFolder(parent, { count: 20, stuckProcessing: 0 });
    const env = { ...process.env, REQWATCH_CACHE_DIR: path.join(parent, "cache") };
    const failed = gateway.requests.find((r) => r.state === "failed")!;
    writeGatewayRequest(gateway, { ...failed, error: "claude exited with code 1: rate limited" });
    const response = gateway.responses.find((r) => r.requestId === failed.requestId)!;
    writeGatewayResponse(gateway, { ...response, callback: { success: false, attempts: 3, retryTimestamps: [], error: "chat service answered 502" } });

    const story = runCli(["explain", failed.requestId], { stateDir: gateway.state, env });
    expect(story.code).toBe(0);
    expect(story.stdout).toContain('Error: "claude exited with code 1: rate limited".');
    expect(story.stdout).toContain('Callback: failed after 3 attempts ("chat service answered 502").');
  });
});
