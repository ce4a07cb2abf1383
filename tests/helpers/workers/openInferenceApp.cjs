// An application using the Anthropic SDK traced by OpenInference's instrumentation against a mock of
// the Messages API, its tracer provider exporting over OTLP/HTTP to `receiver`. Arguments:
// receiver, api, service, the client's node_modules, the OpenTelemetry SDK's node_modules, the
// scenario (plain, tool: an agent (traceAgent) whose model asks for a tool (traceTool) then
// answers; error: 529 every time; aborted: the caller aborts the call as its request goes out), and
// the exporter's encoding (proto, or json to capture fixtures).
const [receiver, api, service, client, otel, scenario, encoding = "proto"] = process.argv.slice(2);
const { BasicTracerProvider, BatchSpanProcessor } = require(otel + "/@opentelemetry/sdk-trace-base");
const { OTLPTraceExporter } = require(otel + (encoding === "json" ? "/@opentelemetry/exporter-trace-otlp-http" : "/@opentelemetry/exporter-trace-otlp-proto"));
const { resourceFromAttributes } = require(otel + "/@opentelemetry/resources");
const { AsyncLocalStorageContextManager } = require(otel + "/@opentelemetry/context-async-hooks");
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": service }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver + "/v1/traces" }))],
});
const otelApi = require(client + "/@opentelemetry/api");
otelApi.trace.setGlobalTracerProvider(provider);
otelApi.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const { AnthropicInstrumentation } = require(client + "/@arizeai/openinference-instrumentation-anthropic");
const { traceAgent, traceTool } = require(client + "/@arizeai/openinference-core");
const Anthropic = require(client + "/@anthropic-ai/sdk");
new AnthropicInstrumentation().manuallyInstrument(Anthropic);
const anthropic = new Anthropic.default({ baseURL: api, apiKey: "test-key-for-the-mock", maxRetries: 1 });
const model = "claude-sonnet-4-5";

const bash = traceTool(async ({ command }) => `ran ${command}: hi`, { name: "Bash" });
const agent = traceAgent(
  async (prompt) => {
    const tools = [{ name: "Bash", description: "Run a shell command", input_schema: { type: "object", properties: { command: { type: "string" } } } }];
    const messages = [{ role: "user", content: prompt }];
    const first = await anthropic.messages.create({ model, max_tokens: 100, tools, messages });
    const use = first.content.find((block) => block.type === "tool_use");
    messages.push(
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: await bash(use.input) }] },
    );
    const second = await anthropic.messages.create({ model, max_tokens: 100, tools, messages });
    return second.content[0].text;
  },
  { name: "shell-agent" },
);

async function run() {
  if (scenario === "tool") return agent("say hi with bash");
  if (scenario === "aborted") {
    const controller = new AbortController();
    const request = anthropic.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }, { signal: controller.signal });
    controller.abort();
    await request;
    return "answered";
  }
  const message = await anthropic.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
  return message.content[0].text;
}

run()
  .then(
    (answer) => console.log(answer),
    (error) => console.log(`failed: ${error.status ?? ""} ${error.message}`),
  )
  .finally(() => provider.shutdown());
