import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for the Anthropic Messages API (POST /v1/messages, streamed or not), for the
 * real Claude Code CLI and the real Anthropic SDK to call instead of the network. What each call
 * gets is the scenario's: an answer in text, a Bash tool use first, 529 "Overloaded" some times
 * first, the Agent tool first (Claude Code's subagent, whose own call gets the text), or no answer at all (a hung API), or a stream that stops after its first words and never
 * ends (for a client to abort). Every call it saw is kept. `retryAfterMs` is sent with each 529 as
 * `retry-after-ms`, for clients whose own backoff would take seconds.
 */
export type Scenario = "text" | "tool" | "subagent" | "overloaded-twice" | "overloaded" | "hang" | "stall";

export async function anAnthropicMock(scenario: Scenario, options: { retryAfterMs?: number } = {}) {
  const calls: { model: string; stream: boolean }[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      if (request.method !== "POST" || !request.url?.startsWith("/v1/messages") || request.url.includes("count_tokens")) {
        response.writeHead(request.url?.includes("count_tokens") ? 200 : 404, { "content-type": "application/json" });
        response.end(
          request.url?.includes("count_tokens")
            ? JSON.stringify({ input_tokens: 100 })
            : JSON.stringify({ type: "error", error: { type: "not_found_error", message: "not here" } }),
        );
        return;
      }
      const asked = JSON.parse(body || "{}") as { model?: string; stream?: boolean; messages?: unknown };
      calls.push({ model: asked.model ?? "", stream: asked.stream === true });
      const n = calls.length;
      const requestId = `req_mock_${n}`;
      if (scenario === "hang") {
        hanging.add(response);
        return;
      }
      if (scenario === "overloaded" || (scenario === "overloaded-twice" && n <= 2)) {
        response.writeHead(529, {
          "content-type": "application/json",
          "request-id": requestId,
          "x-should-retry": "true",
          ...(options.retryAfterMs !== undefined && { "retry-after-ms": String(options.retryAfterMs) }),
        });
        response.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
        return;
      }
      const said = JSON.stringify(asked.messages ?? []);
      // The subagent's own call (its task's words) is answered in text.
      const wantsTool = (scenario === "tool" || scenario === "subagent") && !said.includes("tool_result") && !said.includes("SUBTASK");
      type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, string> };
      const content: Block[] = wantsTool
        ? [
            scenario === "subagent"
              ? {
                  type: "tool_use",
                  id: `toolu_${n}`,
                  name: "Agent",
                  input: { description: "a small task", prompt: "SUBTASK: say hi", subagent_type: "general-purpose" },
                }
              : { type: "tool_use", id: `toolu_${n}`, name: "Bash", input: { command: "echo hi", description: "say hi" } },
          ]
        : [{ type: "text", text: "Hello from the mock." }];
      const stop = wantsTool ? "tool_use" : "end_turn";
      const usage = { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
      const message = { id: `msg_${n}`, type: "message", role: "assistant", model: asked.model, content, stop_reason: stop, stop_sequence: null, usage };
      if (!asked.stream) {
        response.writeHead(200, { "content-type": "application/json", "request-id": requestId });
        response.end(JSON.stringify(message));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "request-id": requestId });
      const send = (event: string, data: unknown) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send("message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
      if (scenario === "stall") {
        send("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
        send("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } });
        hanging.add(response);
        return;
      }
      content.forEach((block, index) => {
        if (block.type === "text") {
          send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
          send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
        } else {
          send("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
          send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
        }
        send("content_block_stop", { type: "content_block_stop", index });
      });
      send("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 30 } });
      send("message_stop", { type: "message_stop" });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
