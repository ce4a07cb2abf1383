// An application using the Vercel AI SDK with its Anthropic provider against a mock of the Messages
// API, its tracer provider (the OpenTelemetry SDK) exporting over OTLP/HTTP to `receiver`.
// Arguments: receiver, api, service, the client's node_modules, the OpenTelemetry SDK's
// node_modules, the integration (6: experimental_telemetry; 7: @ai-sdk/otel's OpenTelemetry;
// 7-legacy: its LegacyOpenTelemetry), the scenario (plain, tool, retried, exhausted, aborted,
// aborted-call), and
// the exporter's encoding (proto, or json to capture fixtures). Prints what the SDK answered.
const [receiver, api, service, client, otel, integration, scenario, encoding = "proto"] = process.argv.slice(2);
const { BasicTracerProvider, BatchSpanProcessor } = require(otel + "/@opentelemetry/sdk-trace-base");
const { OTLPTraceExporter } = require(otel + (encoding === "json" ? "/@opentelemetry/exporter-trace-otlp-http" : "/@opentelemetry/exporter-trace-otlp-proto"));
const { resourceFromAttributes } = require(otel + "/@opentelemetry/resources");
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": service }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver + "/v1/traces" }))],
});
const otelApi = require(client + "/@opentelemetry/api");
otelApi.trace.setGlobalTracerProvider(provider);
// As the Node SDK does: the active span follows the async calls, so a step's spans nest in its call's.
const { AsyncLocalStorageContextManager } = require(otel + "/@opentelemetry/context-async-hooks");
otelApi.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const ai = require(client + "/ai");
const { createAnthropic } = require(client + "/@ai-sdk/anthropic");
if (integration !== "6") {
  const integrations = require(client + "/@ai-sdk/otel");
  ai.registerTelemetry(integration === "7-legacy" ? new integrations.LegacyOpenTelemetry() : new integrations.OpenTelemetry());
}
const model = createAnthropic({ baseURL: api + "/v1", apiKey: "test-key-for-the-mock" })("claude-sonnet-4-5");
// 6 turns telemetry on per call; 7 has it on once an integration is registered.
const telemetry = integration === "6" ? { experimental_telemetry: { isEnabled: true } } : {};
const bash = ai.tool({
  description: "Run a shell command",
  inputSchema: ai.jsonSchema({ type: "object", properties: { command: { type: "string" }, description: { type: "string" } }, required: ["command"] }),
  execute: async ({ command }) => `ran ${command}: hi`,
});

async function run() {
  if (scenario === "tool") {
    const result = await ai.generateText({ model, prompt: "say hi with bash", tools: { Bash: bash }, stopWhen: ai.stepCountIs(5), ...telemetry });
    return `${result.steps.length} steps: ${result.text}`;
  }
  if (scenario === "aborted") {
    const controller = new AbortController();
    const result = ai.streamText({ model, prompt: "hi", abortSignal: controller.signal, ...telemetry, onError: () => {} });
    let text = "";
    try {
      for await (const chunk of result.textStream) {
        text += chunk;
        // The mock's stream stalls after its first words: the user gives up on it.
        controller.abort();
      }
    } catch (error) {
      return `aborted after "${text}": ${error.name}`;
    }
    return `aborted after "${text}"`;
  }
  if (scenario === "aborted-call") {
    // The caller gives up on a call the API never answers: its abort signal fires as the request goes out.
    const controller = new AbortController();
    const giveUp = createAnthropic({
      baseURL: api + "/v1",
      apiKey: "test-key-for-the-mock",
      fetch: (url, init) => {
        const sent = fetch(url, init);
        controller.abort();
        return sent;
      },
    })("claude-sonnet-4-5");
    await ai.generateText({ model: giveUp, prompt: "hi", abortSignal: controller.signal, ...telemetry });
    return "answered";
  }
  const maxRetries = scenario === "exhausted" ? 2 : 3;
  const result = await ai.generateText({ model, prompt: "hi", maxRetries, ...telemetry });
  return result.text;
}

run()
  .then(
    (answer) => console.log(answer),
    (error) => console.log(`failed: ${error.message}`),
  )
  .finally(() => provider.shutdown());
