import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { tempParent } from "../helpers/stateDir";

// The redaction stage between the mapping and the store: what a telemetry export carries is kept
// only with its secrets taken out, in the lifecycles and in the names counted as unmapped.
const PASSWORD = "Zq8vLm2Rt5-hunter";
const TOKEN = "tok_9f8e7d6c5b4a39281706";
const REDACTION = { raw: [], patterns: [] };

const text = (key: string, value: string) => ({ key, value: { stringValue: value } });
const NOW = Date.now();
const nanos = (ms: number) => `${ms}000000`;

function everyText(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    return tables.map((table) => JSON.stringify(db.prepare(`SELECT * FROM ${table}`).all())).join("\n");
  } finally {
    db.close();
  }
}

describe("what the receiver keeps, redacted", () => {
  it("a secret in a Claude Code tool's input (JSON text, its quotes escaped) and in the names no dialect maps is never stored", () => {
    const file = path.join(tempParent(), "telemetry.db");
    const store = new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 });
    const resource = { attributes: [text("service.name", "claude-code")] };
    // Claude Code sends a tool's input as JSON text; a command that posts JSON holds it escaped once more.
    const toolInput = JSON.stringify({ command: `curl -s -d '${JSON.stringify({ user: "ada", password: PASSWORD })}' https://api.example` });
    const logs = {
      resourceLogs: [
        {
          resource,
          scopeLogs: [
            {
              scope: { name: "com.anthropic.claude_code.events" },
              logRecords: [
                {
                  timeUnixNano: nanos(NOW - 100),
                  eventName: "claude_code.user_prompt",
                  attributes: [text("prompt.id", "p-1"), text("session.id", "s-1"), text("prompt", "run it")],
                },
                {
                  timeUnixNano: nanos(NOW - 50),
                  eventName: "claude_code.tool_result",
                  attributes: [
                    text("prompt.id", "p-1"),
                    text("session.id", "s-1"),
                    text("tool_name", "Bash"),
                    text("tool_use_id", "toolu_1"),
                    text("success", "true"),
                    text("tool_input", toolInput),
                  ],
                },
              ],
            },
            // A log with no event name is counted by the start of its body.
            { scope: { name: "my-http-server" }, logRecords: [{ timeUnixNano: nanos(NOW), body: { stringValue: `GET /callback?token=${TOKEN} 200` } }] },
          ],
        },
      ],
    };
    const traces = {
      resourceSpans: [
        {
          resource: { attributes: [text("service.name", "billing")] },
          scopeSpans: [
            {
              scope: { name: "pg" },
              spans: [
                {
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                  name: `connect PGPASSWORD=${PASSWORD} host=db`,
                  kind: 3,
                  startTimeUnixNano: nanos(NOW - 10),
                  endTimeUnixNano: nanos(NOW),
                  status: {},
                },
              ],
            },
          ],
        },
      ],
    };
    for (const [signal, body] of [
      ["logs", logs],
      ["traces", traces],
    ] as const)
      ingestExport(store, REDACTION, signal, decodeExport(signal, "json", Buffer.from(JSON.stringify(body))), NOW);
    store.close();

    const stored = everyText(file);
    expect(stored).not.toContain(PASSWORD);
    expect(stored).not.toContain(TOKEN);
    expect(stored).toContain("[redacted: password]");
    // What was around them stays: the tool's command, the names' shapes.
    expect(stored).toContain("curl -s -d");
    expect(stored).toContain("https://api.example");
    expect(stored).toContain("connect PGPASSWORD=[redacted: password] host=db");
    expect(stored).toContain("GET /callback?token=[redacted: token]");
  });
});
