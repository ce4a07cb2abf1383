import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for OpenAI's Responses API (POST /v1/responses, streamed as server-sent events),
 * for the real Codex CLI to call through a model provider of its config instead of the network.
 * What each call gets is the scenario's: an answer in text, a shell tool call first (then text
 * once the tool's output comes back), 500 twice first, 500 every time, or no answer at all (a hung
 * API). Anything else it asks (its analytics, a models list) gets an empty answer. Every call it saw is kept.
 * `holdFrom` holds the answer to that call and later ones until `release()`: a test then knows what
 * the client had sent before it (its telemetry of the earlier attempts) without guessing at a timing.
 */
export type ResponsesScenario = "text" | "tool" | "error-twice" | "error" | "hang";

export interface ResponsesCall {
  model: string;
  status: number;
  /** Whether the request carried a tool's output back (the call after a tool ran). */
  toolOutput: boolean;
  /** The names of the tools it offered the model. */
  tools: string[];
}

export const MOCK_USAGE = {
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 20 },
  output_tokens: 30,
  output_tokens_details: { reasoning_tokens: 5 },
  total_tokens: 150,
};
export const MOCK_ANSWER = "Hello from the mock.";

/** The shell tool a Codex request offers (its name has changed across versions), and its arguments for `echo hi`. */
function shellCall(tools: string[]): { name: string; arguments: string } {
  if (tools.includes("exec_command")) return { name: "exec_command", arguments: JSON.stringify({ cmd: "echo hi" }) };
  if (tools.includes("shell_command")) return { name: "shell_command", arguments: JSON.stringify({ command: "echo hi" }) };
  return { name: "shell", arguments: JSON.stringify({ command: ["echo", "hi"] }) };
}

export async function anOpenAiResponsesMock(scenario: ResponsesScenario, options: { holdFrom?: number } = {}) {
  const calls: ResponsesCall[] = [];
  /** What else the client asked (`POST /v1/analytics/codex/turn-costs`), in order. */
  const others: string[] = [];
  const hanging = new Set<http.ServerResponse>();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", async () => {
      if (request.method !== "POST" || !request.url?.endsWith("/responses")) {
        others.push(`${request.method} ${request.url}`);
        // Codex posts its analytics (turn costs) to the provider's base URL once it has telemetry on: taken, as the API would.
        const known = request.url?.includes("/models") || request.url?.includes("/analytics/");
        response.writeHead(known ? 200 : 404, { "content-type": "application/json" });
        response.end(
          known ? JSON.stringify({ object: "list", data: [], models: [] }) : JSON.stringify({ error: { message: "not here", type: "invalid_request_error" } }),
        );
        return;
      }
      const asked = JSON.parse(body || "{}") as { model?: string; input?: { type?: string }[]; tools?: { name?: string; type?: string }[] };
      const tools = (asked.tools ?? []).map((tool) => tool.name ?? tool.type ?? "");
      const toolOutput = (asked.input ?? []).some((item) => item.type === "function_call_output" || item.type === "custom_tool_call_output");
      const n = calls.length + 1;
      const failing = scenario === "error" || (scenario === "error-twice" && n <= 2);
      calls.push({ model: asked.model ?? "", status: scenario === "hang" ? 0 : failing ? 500 : 200, toolOutput, tools });
      if (scenario === "hang") {
        hanging.add(response);
        return;
      }
      if (options.holdFrom !== undefined && n >= options.holdFrom) await released;
      if (failing) {
        response.writeHead(500, { "content-type": "application/json", "x-request-id": `req_mock_${n}` });
        response.end(JSON.stringify({ error: { message: "The server had an error while processing your request.", type: "server_error", code: null } }));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "x-request-id": `req_mock_${n}` });
      const send = (data: { type: string } & Record<string, unknown>) => response.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
      const id = `resp_mock_${n}`;
      const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model: asked.model, status: "in_progress", output: [] as unknown[] };
      send({ type: "response.created", response: base });
      let item: Record<string, unknown>;
      if (scenario === "tool" && !toolOutput) {
        const call = shellCall(tools);
        item = { type: "function_call", id: `fc_mock_${n}`, call_id: `call_mock_${n}`, name: call.name, arguments: call.arguments, status: "completed" };
        send({ type: "response.output_item.added", output_index: 0, item: { ...item, arguments: "" } });
      } else {
        item = {
          type: "message",
          id: `msg_mock_${n}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: MOCK_ANSWER, annotations: [] }],
        };
        send({ type: "response.output_item.added", output_index: 0, item: { ...item, content: [], status: "in_progress" } });
        for (const delta of ["Hello from ", "the mock."])
          send({ type: "response.output_text.delta", item_id: item.id, output_index: 0, content_index: 0, delta });
      }
      send({ type: "response.output_item.done", output_index: 0, item });
      send({ type: "response.completed", response: { ...base, status: "completed", output: [item], usage: MOCK_USAGE } });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    others,
    release: () => release(),
    close: () =>
      new Promise<void>((resolve) => {
        release();
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
