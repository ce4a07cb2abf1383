import fs from "node:fs";
import path from "node:path";

export interface CodexConfigOptions {
  /** The dashboard's receiver (`http://127.0.0.1:<port>`): the [otel] section a user writes, pointed there. None: no telemetry. */
  receiver?: string;
  protocol?: "binary" | "json";
  /** Codex's own retries of a failed request (its `request_max_retries`). */
  maxRetries?: number;
  traces?: boolean;
  metrics?: boolean;
}

/**
 * Writes `home`/config.toml, as a Codex CLI user does: the model provider at a local mock of the
 * Responses API (its key from MOCK_OPENAI_KEY), and with `receiver` the telemetry sent there.
 */
export function writeCodexConfig(home: string, apiUrl: string, options: CodexConfigOptions = {}): void {
  const { receiver, protocol = "binary", maxRetries = 4, traces = true, metrics = false } = options;
  const exporter = (signal: string) => `{ otlp-http = { endpoint = "${receiver}/v1/${signal}", protocol = "${protocol}" } }`;
  const lines = [
    'model = "gpt-5-codex"',
    'model_provider = "mock"',
    "",
    "[model_providers.mock]",
    'name = "Mock"',
    `base_url = "${apiUrl}"`,
    'wire_api = "responses"',
    'env_key = "MOCK_OPENAI_KEY"',
    `request_max_retries = ${maxRetries}`,
    "stream_max_retries = 0",
    "",
  ];
  if (receiver) {
    lines.push("[otel]", 'environment = "test"', "log_user_prompt = true", `exporter = ${exporter("logs")}`);
    if (traces) lines.push(`trace_exporter = ${exporter("traces")}`);
    if (metrics) lines.push(`metrics_exporter = ${exporter("metrics")}`);
    lines.push("");
  }
  fs.writeFileSync(path.join(home, "config.toml"), lines.join("\n"));
}
