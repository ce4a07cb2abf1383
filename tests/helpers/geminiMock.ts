import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for the Gemini API (POST /v1beta/models/<model>:generateContent,
 * :streamGenerateContent?alt=sse, :countTokens), for the real Gemini CLI to call instead of the
 * network. The CLI's router (a JSON-schema call asking for a complexity score) is answered "simple";
 * the main calls get the scenario's: an answer in text, two read_file calls first (one of a file
 * that is there, one of a file that is not), one read_file call first (of the file that is there), 503 "UNAVAILABLE" twice or always, or no answer at all
 * (a hung API). Every call it saw is kept.
 */
export type GeminiScenario = "text" | "tool" | "one-tool" | "unavailable-twice" | "unavailable" | "hang";

export interface GeminiCall {
  model: string;
  method: "generateContent" | "streamGenerateContent" | "countTokens";
  /** The router's call (a classifier asked for a model choice), not a turn's own. */
  router: boolean;
  status: number;
}

/** The mock's text answer, and the files its tool scenario asks the CLI to read. */
export const MOCK_ANSWER = "Hello from the mock.";
export const TOOL_FILES = { present: "note.txt", missing: "missing.txt" } as const;

/**
 * Gemini CLI's settings.json for a run against the mock: its key's auth, no usage statistics, three
 * attempts of a call that fails (ten by default, 5 s apart and doubling), and its telemetry sent to
 * `receiver` (the dashboard's, `http://127.0.0.1:<port>`), or off.
 */
export function geminiSettings(receiver?: string): object {
  return {
    telemetry: receiver ? { enabled: true, target: "local", otlpEndpoint: receiver, otlpProtocol: "http", logPrompts: true } : { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    security: { auth: { selectedType: "gemini-api-key" } },
    general: { maxAttempts: 3 },
  };
}

const MAIN_USAGE = { promptTokenCount: 120, candidatesTokenCount: 30, cachedContentTokenCount: 20, totalTokenCount: 150 };
const ROUTER_USAGE = { promptTokenCount: 50, candidatesTokenCount: 10, totalTokenCount: 60 };

type Content = { role?: string; parts?: { text?: string; functionCall?: unknown; functionResponse?: unknown }[] };

export async function aGeminiMock(scenario: GeminiScenario) {
  const calls: GeminiCall[] = [];
  const hanging = new Set<http.ServerResponse>();
  let mainCalls = 0;
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const match = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)/.exec(request.url ?? "");
      if (request.method !== "POST" || !match) {
        response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: 404, message: "not here", status: "NOT_FOUND" } }));
        return;
      }
      const [, model, method] = match as unknown as [string, string, GeminiCall["method"]];
      const asked = JSON.parse(body || "{}") as { contents?: Content[]; systemInstruction?: Content; generationConfig?: { responseMimeType?: string } };
      if (method === "countTokens") {
        calls.push({ model, method, router: false, status: 200 });
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ totalTokens: 100 }));
        return;
      }
      // The router's classifier: 0.61.0's asks for a complexity score (an older one for a model choice).
      const instruction = JSON.stringify(asked.systemInstruction ?? "");
      const router = instruction.includes("complexity_score") || instruction.includes("model_choice");
      const call: GeminiCall = { model, method, router, status: 200 };
      calls.push(call);
      const stream = method === "streamGenerateContent";
      const answer = (parts: unknown[], usage: object) => {
        const chunk = {
          candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
          usageMetadata: usage,
          modelVersion: model,
          responseId: `resp_mock_${calls.length}`,
        };
        if (!stream) {
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(chunk));
          return;
        }
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
      };
      if (router) {
        const choice = instruction.includes("complexity_score")
          ? { complexity_reasoning: "A simple, bounded request.", complexity_score: 10 }
          : { reasoning: "A simple, bounded request.", model_choice: "flash" };
        answer([{ text: JSON.stringify(choice) }], ROUTER_USAGE);
        return;
      }
      mainCalls += 1;
      if (scenario === "hang") {
        hanging.add(response);
        return;
      }
      if (scenario === "unavailable" || (scenario === "unavailable-twice" && mainCalls <= 2)) {
        call.status = 503;
        response
          .writeHead(503, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }));
        return;
      }
      // Any JSON the CLI asks for outside the router (a check of its own) gets an empty object.
      if (asked.generationConfig?.responseMimeType === "application/json") {
        answer([{ text: "{}" }], ROUTER_USAGE);
        return;
      }
      const answered = JSON.stringify(asked.contents ?? []).includes("functionResponse");
      if (scenario === "tool" && !answered) {
        answer(
          [
            { functionCall: { name: "read_file", args: { file_path: TOOL_FILES.present } } },
            { functionCall: { name: "read_file", args: { file_path: TOOL_FILES.missing } } },
          ],
          MAIN_USAGE,
        );
        return;
      }
      if (scenario === "one-tool" && !answered) {
        answer([{ functionCall: { name: "read_file", args: { file_path: TOOL_FILES.present } } }], MAIN_USAGE);
        return;
      }
      answer([{ text: MOCK_ANSWER }], MAIN_USAGE);
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
