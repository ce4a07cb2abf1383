// An application using the Anthropic SDK traced by Traceloop's OpenLLMetry SDK against a mock of the
// Messages API, the SDK exporting over OTLP/HTTP to `receiver` (its `baseUrl`). Arguments:
// receiver, api, service, the client's node_modules, the OpenTelemetry SDK's node_modules, the
// scenario (plain, tool: an agent (withAgent) whose model asks for a tool (withTool) then answers;
// error: 529 every time), and the exporter's encoding (proto, the SDK's own; or json to capture).
const [receiver, api, service, client, otel, scenario, encoding = "proto"] = process.argv.slice(2);
const traceloop = require(client + "/@traceloop/node-server-sdk");
const Anthropic = require(client + "/@anthropic-ai/sdk");
const json = encoding === "json" && new (require(otel + "/@opentelemetry/exporter-trace-otlp-http").OTLPTraceExporter)({ url: receiver + "/v1/traces" });
traceloop.initialize({
  appName: service,
  baseUrl: receiver,
  apiKey: "none",
  disableBatch: true,
  traceloopSyncEnabled: false,
  silenceInitializationMessage: true,
  instrumentModules: { anthropic: Anthropic },
  ...(json && { exporter: json }),
});
const anthropic = new Anthropic.default({ baseURL: api, apiKey: "test-key-for-the-mock", maxRetries: 1 });
const model = "claude-sonnet-4-5";

async function agent(prompt) {
  const tools = [{ name: "Bash", description: "Run a shell command", input_schema: { type: "object", properties: { command: { type: "string" } } } }];
  const messages = [{ role: "user", content: prompt }];
  const first = await anthropic.messages.create({ model, max_tokens: 100, tools, messages });
  const use = first.content.find((block) => block.type === "tool_use");
  const result = await traceloop.withTool({ name: "Bash" }, async () => `ran ${use.input.command}: hi`);
  messages.push({ role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: result }] });
  const second = await anthropic.messages.create({ model, max_tokens: 100, tools, messages });
  return second.content[0].text;
}

async function run() {
  if (scenario === "tool") return traceloop.withAgent({ name: "shell-agent" }, () => agent("say hi with bash"));
  const message = await anthropic.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
  return message.content[0].text;
}

run()
  .then(
    (answer) => console.log(answer),
    (error) => console.log(`failed: ${error.status ?? ""} ${error.message}`),
  )
  // The SDK keeps timers of its own: the application ends once its spans are sent.
  .finally(() => traceloop.forceFlush().then(() => process.exit(0)));
