import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { aDashboard } from "../helpers/dashboard";
import { CLAUDE_CODE_FIXTURES } from "../helpers/claudeCodeExports";
import { receivedTurns } from "../helpers/receivedTurns";
import { recordedExports, sendExports, type RecordedExport } from "../helpers/recordedExports";

// Claude Code leaves `prompt.id` off some of its `user_prompt` events. What it sent (its own
// exports, tests/fixtures/otlp) without that attribute, through the dashboard's receiver: the
// prompt is a turn on the otel pages, not a count on Health alone.
let dashboard: Awaited<ReturnType<typeof aDashboard>>;
afterEach(async () => dashboard?.close());

/** Claude Code's JSON log exports, every event without `prompt.id` and, with `trace: false`, without its trace. */
function withoutPromptId(exports: RecordedExport[], { trace }: { trace: boolean }): RecordedExport[] {
  type Body = { resourceLogs: { scopeLogs: { logRecords: { attributes: { key: string }[]; traceId?: string }[] }[] }[] };
  return exports.map((item) => {
    if (item.signal !== "logs") return item;
    const body = JSON.parse(item.body.toString("utf8")) as Body;
    for (const record of body.resourceLogs.flatMap((resource) => resource.scopeLogs.flatMap((scope) => scope.logRecords))) {
      record.attributes = record.attributes.filter((attribute) => attribute.key !== "prompt.id");
      if (!trace) delete record.traceId;
    }
    return { ...item, body: Buffer.from(JSON.stringify(body)) };
  });
}

describe("a Claude Code prompt sent without its prompt.id", () => {
  it("is a turn on the otel pages: whole when its events share its trace, its prompt alone (processing) when nothing else ties them", async () => {
    dashboard = await aDashboard({}, { port: 0, keepMs: 86_400_000, stuckAfterMs: 600_000 });
    const { url } = await dashboard.runtime.telemetry!.ready;
    const turns = receivedTurns(() => dashboard);

    await sendExports(url!, withoutPromptId(recordedExports(path.join(CLAUDE_CODE_FIXTURES, "plain")), { trace: true }));
    const whole = await turns.turnOf("say hello", "completed");
    expect(whole.view.request).toMatchObject({ prompt: "say hello", output: "Hello from the mock." });

    await sendExports(
      url!,
      withoutPromptId(
        recordedExports(path.join(CLAUDE_CODE_FIXTURES, "interrupted")).filter((item) => item.signal === "logs"),
        { trace: false },
      ),
    );
    const alone = await turns.turnOf("say hello", (row) => row.state === "processing");
    expect(alone.view.steps!.map((step) => `${step.name}: ${step.summary}`)).toEqual([
      "user_prompt: a prompt of 9 characters; sent without its prompt.id or a trace, so the events after it cannot be told apart from other prompts' and are counted on Health as unmapped",
    ]);
  });
});
