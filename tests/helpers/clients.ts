import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

/** The real clients the tests run, each pinned: what they export is what reqwatch must understand. */
export const CLIENTS = {
  claudeCode: "@anthropic-ai/claude-code@2.1.332",
  anthropicSdk: "@anthropic-ai/sdk@1.14.0",
  claudeMem: "claude-mem@13.25.3",
  geminiCli: "@google/gemini-cli@0.61.0",
  bullmq: "bullmq@6.7.0",
  amqplib: "amqplib@2.3.1",
  // Its package carries no binary: npm installs the platform's own as an optional dependency (@openai/codex-linux-x64, a vendor folder).
  codexCli: "@openai/codex@0.171.0",
  aiSdk6: "ai@6.0.325",
  aiSdk6Anthropic: "@ai-sdk/anthropic@3.0.140",
  aiSdk7: "ai@7.0.173",
  aiSdk7Anthropic: "@ai-sdk/anthropic@4.0.105",
  aiSdk7Otel: "@ai-sdk/otel@1.0.173",
  openInferenceAnthropic: "@arizeai/openinference-instrumentation-anthropic@0.2.8",
  traceloop: "@traceloop/node-server-sdk@0.27.0",
  // Traceloop's Anthropic instrumentation patches `Anthropic.Completions`, which the SDK 1.x no longer has.
  traceloopAnthropicSdk: "@anthropic-ai/sdk@0.80.0",
  mastra: "@mastra/core@1.71.0",
  mastraObservability: "@mastra/observability@1.17.9",
  mastraOtelExporter: "@mastra/otel-exporter@1.4.0",
  // Its package is a launcher; the program is the platform's native binary. 20.0.26 has no linux-x64 one.
  ccusage: "ccusage@20.0.24",
  ccusageLinuxX64: "@ccusage/ccusage-linux-x64@20.0.24",
} as const;

/**
 * A client from the npm registry as its users install it, once, into .toolchain/clients/<spec>
 * (beside the Node releases scripts/node.sh keeps): installed beside its place and renamed in, so
 * test files that ask at the same moment share one. Returns its folder (node_modules inside).
 */
export function installedClient(spec: string, install: (staging: string) => void = (staging) => npmInstall(staging, [spec])): string {
  const parent = path.join(ROOT, ".toolchain", "clients");
  const folder = path.join(parent, spec.replace(/[/@]/g, "_"));
  if (fs.existsSync(path.join(folder, ".installed"))) return folder;
  fs.mkdirSync(parent, { recursive: true });
  const staging = fs.mkdtempSync(path.join(parent, ".installing-"));
  try {
    fs.writeFileSync(path.join(staging, "package.json"), JSON.stringify({ name: "client", version: "1.0.0", private: true }));
    install(staging);
    fs.writeFileSync(path.join(staging, ".installed"), `${spec}\n`);
    fs.renameSync(staging, folder);
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    if (!fs.existsSync(path.join(folder, ".installed"))) throw error;
  }
  return folder;
}

/**
 * The Vercel AI SDK with its Anthropic provider, as an application installs them: 6 with
 * `@ai-sdk/anthropic@3`; 7 with `@ai-sdk/anthropic@4` and `@ai-sdk/otel` (7's OpenTelemetry
 * integrations); the OpenTelemetry API beside them, so the application's tracer provider is the one
 * the SDK finds.
 */
export function installedAiSdk(version: 6 | 7): string {
  const specs =
    version === 6
      ? [CLIENTS.aiSdk6, CLIENTS.aiSdk6Anthropic, "@opentelemetry/api@1.9.1"]
      : [CLIENTS.aiSdk7, CLIENTS.aiSdk7Anthropic, CLIENTS.aiSdk7Otel, "@opentelemetry/api@1.9.1"];
  return installedClient(specs.slice(0, -1).join("+"), (staging) => npmInstall(staging, specs));
}

/** The Anthropic SDK traced by OpenInference's instrumentation (which patches it when registered). */
export function installedOpenInference(): string {
  return installedClient(`${CLIENTS.openInferenceAnthropic}+${CLIENTS.anthropicSdk}`, (staging) =>
    npmInstall(staging, [CLIENTS.openInferenceAnthropic, CLIENTS.anthropicSdk, "@opentelemetry/api@1.9.0"]),
  );
}

/** Traceloop's OpenLLMetry SDK (its own tracer provider and OTLP exporter) with the Anthropic SDK it instruments. */
export function installedTraceloop(): string {
  return installedClient(`${CLIENTS.traceloop}+${CLIENTS.traceloopAnthropicSdk}`, (staging) =>
    npmInstall(staging, [CLIENTS.traceloop, CLIENTS.traceloopAnthropicSdk]),
  );
}

/**
 * Mastra with its observability and OpenTelemetry exporter, the AI SDK's Anthropic provider for its
 * model, and the OTLP/HTTP exporter the exporter loads (a peer: installed without the others, gRPC
 * and Zipkin, which it loads only when asked for them).
 */
export function installedMastra(): string {
  const specs = [
    CLIENTS.mastra,
    CLIENTS.mastraObservability,
    CLIENTS.mastraOtelExporter,
    CLIENTS.aiSdk6Anthropic,
    "zod@4",
    "@opentelemetry/exporter-trace-otlp-proto@0.218.0",
  ];
  return installedClient(specs.slice(0, 3).join("+"), (staging) =>
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", "--legacy-peer-deps", ...specs], { cwd: staging, stdio: "pipe" }),
  );
}

function npmInstall(folder: string, specs: string[]): void {
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", ...specs], { cwd: folder, stdio: "pipe" });
}

/**
 * claude-mem's package as its plugin runs it: the worker (plugin/scripts/worker-service.cjs) under
 * Bun (the `bun` package), with the modules its plugin folder installs that the worker loads. Its
 * own dependencies (better-auth, for its optional server mode) are not installed: npm takes minutes
 * resolving them and the worker does not load them. Returns the worker script and Bun.
 */
export function installedClaudeMem(): { worker: string; bun: string } {
  const folder = installedClient(CLIENTS.claudeMem, (staging) => {
    npmInstall(staging, ["bun@1.4.5", "zod@^4.4.3", "ajv@^8", "ajv-formats@^3"]);
    const tarball = execFileSync("npm", ["pack", "--silent", CLIENTS.claudeMem], { cwd: staging, encoding: "utf8" }).trim().split("\n").at(-1)!;
    execFileSync("tar", ["xzf", tarball], { cwd: staging });
    fs.rmSync(path.join(staging, tarball));
  });
  return { worker: path.join(folder, "package", "plugin", "scripts", "worker-service.cjs"), bun: path.join(folder, "node_modules", ".bin", "bun") };
}

/**
 * BullMQ as a user traces it: bullmq with bullmq-otel (its telemetry), ioredis (its Redis client, a
 * peer it does not install), and an OpenTelemetry SDK exporting over OTLP. Each pinned: bullmq-otel
 * 2.0.1 wants @opentelemetry/api ^1.9.1, and sdk-trace-node 2.12 takes an api below 1.10.
 */
export function installedBullmq(): string {
  return installedClient(CLIENTS.bullmq, (staging) =>
    npmInstall(staging, [
      CLIENTS.bullmq,
      "bullmq-otel@2.0.1",
      "ioredis@5.10.1",
      "@opentelemetry/api@1.9.1",
      "@opentelemetry/sdk-trace-node@2.12.1",
      "@opentelemetry/resources@2.12.1",
      "@opentelemetry/exporter-trace-otlp-proto@0.223.1",
      "@opentelemetry/exporter-trace-otlp-http@0.223.1",
    ]),
  );
}

/**
 * amqplib as a user traces it: with @opentelemetry/instrumentation-amqplib (the older messaging
 * conventions' names) and an OpenTelemetry SDK exporting over OTLP. Each pinned: the
 * instrumentation 0.71 wants @opentelemetry/api 1.10, which the SDK's 3.x packages take.
 */
export function installedAmqplib(): string {
  return installedClient(CLIENTS.amqplib, (staging) =>
    npmInstall(staging, [
      CLIENTS.amqplib,
      "@opentelemetry/instrumentation-amqplib@0.71.0",
      "@opentelemetry/instrumentation@0.301.1",
      "@opentelemetry/api@1.10.0",
      "@opentelemetry/sdk-trace@3.1.1",
      "@opentelemetry/core@3.1.1",
      "@opentelemetry/context-async-hooks@3.1.1",
      "@opentelemetry/resources@3.1.1",
      "@opentelemetry/exporter-trace-otlp-proto@0.301.1",
    ]),
  );
}

/** ccusage, the usage report most agent users run, with its native binary: its `.bin/ccusage` launcher. */
export function installedCcusage(): string {
  const folder = installedClient(`${CLIENTS.ccusage}+${CLIENTS.ccusageLinuxX64}`, (staging) => npmInstall(staging, [CLIENTS.ccusage, CLIENTS.ccusageLinuxX64]));
  return path.join(folder, "node_modules", ".bin", "ccusage");
}
