import path from "node:path";
import { describe, expect, it } from "vitest";
import { telemetrySettings } from "../../lib/telemetry/telemetrySettings";
import { aClaudeFolder } from "../helpers/claudeFolder";
import { aDashboard } from "../helpers/dashboard";
import { eventually } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { thrown } from "../helpers/thrown";

// Reading Claude Code's own files is on unless turned off, and reads the folder Claude Code itself writes to.

/** An environment of these variables alone. */
const env = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv;

describe("the settings that read Claude Code's files", () => {
  it("read ~/.claude by default, CLAUDE_CONFIG_DIR where Claude Code is told to write, REQWATCH_CLAUDE_DIR over both", () => {
    expect(telemetrySettings(env({ HOME: "/home/ada" })).claudeDir).toBe("/home/ada/.claude");
    expect(telemetrySettings(env({ HOME: "/home/ada", CLAUDE_CONFIG_DIR: "/srv/claude" })).claudeDir).toBe("/srv/claude");
    expect(telemetrySettings(env({ HOME: "/home/ada", CLAUDE_CONFIG_DIR: "/srv/claude", REQWATCH_CLAUDE_DIR: "/mnt/other" })).claudeDir).toBe("/mnt/other");
  });

  it("read ~/.gemini by default, $GEMINI_CLI_HOME/.gemini where Gemini CLI is told to write, REQWATCH_GEMINI_DIR over both; off with the same switch", () => {
    expect(telemetrySettings(env({ HOME: "/home/ada" })).geminiDir).toBe("/home/ada/.gemini");
    expect(telemetrySettings(env({ HOME: "/home/ada", GEMINI_CLI_HOME: "/srv/gemini" })).geminiDir).toBe("/srv/gemini/.gemini");
    expect(telemetrySettings(env({ HOME: "/home/ada", GEMINI_CLI_HOME: "/srv/gemini", REQWATCH_GEMINI_DIR: "/mnt/other" })).geminiDir).toBe("/mnt/other");
    expect(telemetrySettings(env({ HOME: "/home/ada", REQWATCH_AGENT_FILES: "off" })).geminiDir).toBeNull();
    expect(telemetrySettings(env({ HOME: "/home/ada" }), undefined, "off").geminiDir).toBeNull();
  });

  it("are turned off by REQWATCH_AGENT_FILES=off or --agent-files off, the flag over the variable; a wrong value is refused, naming the setting", () => {
    expect(telemetrySettings(env({ HOME: "/home/ada", REQWATCH_AGENT_FILES: "off" })).claudeDir).toBeNull();
    expect(telemetrySettings(env({ HOME: "/home/ada" }), undefined, "off").claudeDir).toBeNull();
    expect(telemetrySettings(env({ HOME: "/home/ada", REQWATCH_AGENT_FILES: "off" }), undefined, "on").claudeDir).toBe("/home/ada/.claude");
    expect(thrown(() => telemetrySettings(env({ REQWATCH_AGENT_FILES: "maybe" })))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/^Invalid REQWATCH_AGENT_FILES: "maybe"\./),
    });
    expect(thrown(() => telemetrySettings(env({}), undefined, "maybe"))).toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/^Invalid --agent-files: "maybe"\./),
    });
  });

  it("with the receiver off, the dashboard still reads the files into its store; with both off it has none", async () => {
    const { folder } = aClaudeFolder(path.join(tempParent(), ".claude"), ["plain"]);
    const reading = await aDashboard({}, { port: null, keepMs: 86_400_000, stuckAfterMs: 600_000, claudeDir: folder });
    expect(reading.runtime.telemetry).not.toBeNull();
    expect(await reading.runtime.telemetry!.ready).toEqual({ url: null, error: null });
    const turns = await eventually(async () => {
      const response = await reading.ask("/api/requests?source=otel");
      const items = response.json<{ items: { state: string }[] }>().items;
      return items.length > 0 ? items : undefined;
    });
    expect(turns.map((turn) => turn.state)).toEqual(["completed"]);
    expect(reading.runtime.health().telemetry).toMatchObject({
      claudeDir: folder,
      agentFiles: [expect.objectContaining({ agent: "claude-code", files: 1, malformed: 0, oversized: 0 })],
    });
    await reading.runtime.telemetry!.close();
    const neither = await aDashboard({}, { port: null, keepMs: 86_400_000, stuckAfterMs: 600_000, claudeDir: null });
    expect(neither.runtime.telemetry).toBeNull();
  });
});
