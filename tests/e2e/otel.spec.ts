import { spawn } from "node:child_process";
import path from "node:path";
import { lifecycleIds } from "../../lib/otel/lifecycleSpans";
import { aCollector, waitFor } from "../helpers/otlpCollector";
import { expect, test } from "./fixtures";

test("the dashboard with --otel exports each lifecycle as it happens, and its Health page says how the export goes", async ({ page, tracker, launchApp }) => {
  const collector = await aCollector();
  try {
    const { url } = await launchApp({
      REQWATCH_OTEL: "1",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url.replace(/\/v1\/traces$/, ""),
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    tracker.create({ requestId: "traced", workspace: "chat", state: "queued" });
    const claim = tracker.claimNext()!;
    tracker.complete("traced", claim.token);
    const ids = lifecycleIds({ requestId: "traced" });
    await waitFor(() => collector.spans().some((span) => span.spanId === ids.attemptSpanId(1)), 10_000);

    await page.goto(`${url}/health`);
    // The page refreshes every 5 s; the exporter, a process of its own, reports as it goes.
    await expect(page.getByLabel("OpenTelemetry export")).toContainText("Spans exported2", { timeout: 12_000 });
    await expect(page.getByLabel("OpenTelemetry export")).toContainText("Lagcaught up", { timeout: 12_000 });

    // The collector goes down: the page says so (it refreshes every 5 s), and nothing is lost once it is back.
    collector.setDown(true);
    tracker.create({ requestId: "while-down", workspace: "chat", state: "queued" });
    await expect(page.getByLabel("OpenTelemetry export")).toContainText(/Last error.*ago: /, { timeout: 15_000 });
    collector.setDown(false);
    await waitFor(() => collector.spans().some((span) => span.spanId === lifecycleIds({ requestId: "while-down" }).createSpanId), 40_000);
    // And says it recovered.
    await expect(page.getByLabel("OpenTelemetry export")).toContainText("(recovered since)", { timeout: 12_000 });
  } finally {
    await collector.close();
  }
});

test("a dashboard with --otel beside a running `reqwatch otel` waits, its Health page says for which process, and it takes over when that one stops", async ({
  page,
  tracker,
  launchApp,
  reader,
}) => {
  const collector = await aCollector();
  const endpoint = collector.url.replace(/\/v1\/traces$/, "");
  const otel = spawn(process.execPath, [path.resolve(__dirname, "../../bin/reqwatch.js"), "otel", "--state-dir", reader.stateDir.root], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
    stdio: "ignore",
  });
  try {
    tracker.create({ requestId: "first", workspace: "chat", state: "queued" });
    await waitFor(() => collector.spans().some((span) => span.spanId === lifecycleIds({ requestId: "first" }).createSpanId), 15_000);
    const { url } = await launchApp({ REQWATCH_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    await page.goto(`${url}/health`);
    const section = page.getByLabel("OpenTelemetry export");
    await expect(section).toContainText(`Waiting: another exporter (pid ${otel.pid} on `, { timeout: 12_000 });
    await expect(section).toContainText("Spans exported0");
    await expect(section).toContainText("Lag— (the other exporter's)");

    otel.kill("SIGTERM");
    await new Promise((resolve) => otel.once("exit", resolve));
    tracker.create({ requestId: "after", workspace: "chat", state: "queued" });
    await expect(section).toContainText("StateExporting", { timeout: 15_000 });
    await waitFor(() => collector.spans().some((span) => span.spanId === lifecycleIds({ requestId: "after" }).createSpanId), 15_000);
  } finally {
    otel.kill("SIGKILL");
    await collector.close();
  }
});
