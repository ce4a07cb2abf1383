// An application with a Mastra agent (its model the AI SDK's Anthropic provider, against a mock of
// the Messages API) whose observability exports over OTLP/HTTP to `receiver` (@mastra/otel-exporter,
// the `custom` provider). Arguments: receiver, api, service, the client's node_modules, the
// OpenTelemetry SDK's node_modules, the scenario (plain; tool: the model asks for Bash, then
// answers; error: 529 every time), and the exporter's encoding (proto, or json to capture fixtures).
const [receiver, api, service, client, otel, scenario, encoding = "proto"] = process.argv.slice(2);
// Mastra's packages are read through their exports maps: required as the application would.
const load = require("node:module").createRequire(client + "/app.cjs");
const { Mastra } = load("@mastra/core/mastra");
const { Agent } = load("@mastra/core/agent");
const { createTool } = load("@mastra/core/tools");
const { Observability } = load("@mastra/observability");
const { OtelExporter } = load("@mastra/otel-exporter");
const { createAnthropic } = load("@ai-sdk/anthropic");
const { z } = load("zod");

const json = encoding === "json" && new (require(otel + "/@opentelemetry/exporter-trace-otlp-http").OTLPTraceExporter)({ url: receiver + "/v1/traces" });
const exporter = new OtelExporter({ provider: { custom: { endpoint: receiver + "/v1/traces", protocol: "http/protobuf" } }, ...(json && { exporter: json }) });
const bash = createTool({
  id: "Bash",
  description: "Run a shell command",
  inputSchema: z.object({ command: z.string(), description: z.string().optional() }),
  execute: async (input) => `ran ${(input.context ?? input).command}: hi`,
});
const agent = new Agent({
  id: "shell-agent",
  name: "shell-agent",
  instructions: "You run shell commands.",
  model: createAnthropic({ baseURL: api + "/v1", apiKey: "test-key-for-the-mock" })("claude-sonnet-4-5"),
  tools: { Bash: bash },
});
const mastra = new Mastra({
  agents: { shellAgent: agent },
  observability: new Observability({ configs: { otel: { serviceName: service, exporters: [exporter] } } }),
  logger: false,
});

async function run() {
  const result = await mastra
    .getAgent("shellAgent")
    .generate(scenario === "tool" ? "say hi with bash" : "hi", { maxSteps: 5, modelSettings: { maxRetries: 1 } });
  if (result.error) throw result.error;
  return `${result.steps?.length ?? "?"} steps: ${result.text}`;
}

run()
  .then(
    (answer) => console.log(answer),
    (error) => console.log(`failed: ${error.message}`),
  )
  .finally(async () => {
    await mastra.shutdown?.();
    process.exit(0);
  });
