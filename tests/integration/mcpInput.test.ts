import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { tempStateDir } from "../helpers/stateDir";
import { anAgent, call, closeAgents } from "../helpers/mcpAgent";
import { eventually } from "../helpers/processes";
import { LineTransport } from "../../lib/mcp/stdioTransport";

afterEach(closeAgents);

describe("what an agent sends reqwatch mcp", () => {
  it("refuses a message over 10 MB with an error under its id, and answers the next call", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "kept", state: "failed", error: "boom" }));
    const agent = await anAgent(stateDir);

    const huge = call(agent, "get_request", { requestId: "x".repeat(11 * 1024 * 1024) });
    await expect(huge).rejects.toThrow(/11\.0 MB was refused: the limit is 10 MB/);

    const after = await call(agent, "get_request", { requestId: "kept" });
    expect(after.isError).toBe(false);
    expect(JSON.parse(after.text)).toMatchObject({ request: { requestId: "kept", state: "failed" } });
  });

  it("a cleanup dry run with an age past the epoch matches nothing and says so, as the CLI does", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "old", state: "completed", completedAt: 1 }));
    const agent = await anAgent(stateDir);
    const dryRun = await call(agent, "cleanup_dry_run", { olderThan: "99999999999999999999w" });
    expect(dryRun.isError).toBe(false);
    expect(JSON.parse(dryRun.text)).toMatchObject({ matched: 0, cutoff: "1970-01-01T00:00:00.000Z", firstIds: [] });
  });

  it("a retry named by ids and by states is refused by the rule the CLI and the dashboard keep, not run on the ids alone", async () => {
    const stateDir = tempStateDir();
    writeRequestFile(stateDir, aRequest({ requestId: "f1", state: "failed", error: "boom" }));
    const agent = await anAgent(stateDir);
    expect(await call(agent, "retry_requests", { ids: ["f1"], states: ["failed"] })).toEqual({
      isError: true,
      text: expect.stringContaining("A retry takes ids or a filter, not both."),
    });
    expect(await call(agent, "retry_requests", {})).toEqual({ isError: true, text: expect.stringContaining("A retry needs ids or a filter.") });
  });
});

function aTransport(maxBytes: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const warnings: string[] = [];
  const transport = new LineTransport(input, output, maxBytes, (line) => warnings.push(line));
  const received: unknown[] = [];
  transport.onmessage = (message) => received.push(message);
  const sent = (): unknown[] =>
    String(output.read() ?? "")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  return { input, transport, received, warnings, sent };
}

describe("LineTransport", () => {
  it("reads no more input while its answers wait unread (the output full), and reads on once they are read: memory stays bounded", async () => {
    const input = new PassThrough();
    // An agent that does not read: its pipe holds a few answers at most.
    const output = new PassThrough({ highWaterMark: 64 });
    const transport = new LineTransport(input, output, 1024, () => {});
    const received: unknown[] = [];
    transport.onmessage = (message) => {
      received.push(message);
      void transport.send({ jsonrpc: "2.0", id: (message as { id: number }).id, result: { text: "x".repeat(100) } });
    };
    await transport.start();
    for (let id = 1; id <= 100; id++) input.write(`{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    // The first answer filled the output: the input was paused, its other requests left unread in it.
    expect(input.isPaused()).toBe(true);
    const heldWhileFull = received.length;
    expect(heldWhileFull).toBeLessThan(100);
    // The agent reads its answers: the server reads on, to the last request.
    const answers: unknown[] = [];
    output.on("data", (chunk: Buffer) => answers.push(...chunk.toString().split("\n").filter(Boolean)));
    await new Promise<void>((resolve) => {
      const check = () => (received.length === 100 ? resolve() : setImmediate(check));
      check();
    });
    expect(received).toHaveLength(100);
  });

  it("answers waiting on a full output wait together: 100 calls in one chunk add one listener, not one each (Node warns of a leak on stderr past 10)", async () => {
    const input = new PassThrough();
    const output = new PassThrough({ highWaterMark: 64 });
    const transport = new LineTransport(input, output, 1024 * 1024, () => {});
    transport.onmessage = (message) => void transport.send({ jsonrpc: "2.0", id: (message as { id: number }).id, result: { text: "x".repeat(100) } });
    await transport.start();
    input.write(Array.from({ length: 100 }, (_, i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"ping"}\n`).join(""));
    await new Promise((resolve) => setImmediate(resolve));
    expect(input.isPaused()).toBe(true);
    expect(output.listenerCount("drain")).toBe(1);
    const ids = new Set<number>();
    output.on("data", (chunk: Buffer) =>
      chunk
        .toString()
        .split("\n")
        .filter(Boolean)
        .forEach((line) => ids.add((JSON.parse(line) as { id: number }).id)),
    );
    await eventually(() => (ids.size === 100 ? true : undefined));
    expect(input.isPaused()).toBe(false);
  });

  it("reads messages split across chunks and several in one chunk, and closes when its input ends", async () => {
    const { input, transport, received } = aTransport(1024);
    let closed = false;
    transport.onclose = () => (closed = true);
    await transport.start();
    input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0",');
    input.write('"id":2,"method":"ping"}\r\n\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toEqual([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "ping" },
    ]);
    input.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(true);
  });

  it("answers an oversized request under the id at its start or its end, skips it whole, and reads what follows", async () => {
    const { input, transport, received, warnings, sent } = aTransport(100);
    await transport.start();
    const pad = "y".repeat(300);
    input.write(`{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"a":"${pad}`);
    input.write(`${pad}"}}\n`);
    input.write(`{"method":"tools/call","params":{"a":"${pad}","nested":{"id":9}},"jsonrpc":"2.0","id":7}\n`);
    input.write(`{"method":"notifications/x","params":{"a":"${pad}"},"jsonrpc":"2.0"}\n`);
    input.write('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toEqual([{ jsonrpc: "2.0", id: 3, method: "ping" }]);
    const errors = sent() as { id: unknown; error: { code: number; message: string } }[];
    expect(errors.map((reply) => reply.id)).toEqual(["first", 7]);
    expect(errors[0]?.error).toEqual({ code: -32600, message: expect.stringMatching(/was refused: the limit is/) });
    expect(warnings).toHaveLength(3);
  });
});
