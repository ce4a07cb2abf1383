import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli";
import { tempStateDir } from "../helpers/stateDir";

describe("reqwatch session", () => {
  it("starts, records, snapshots, shows, lists and resets, as child processes", () => {
    const stateDir = tempStateDir();
    const started = runCli(["session", "start"], { stateDir });
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    expect(runCli(["session", "start"], { stateDir }).stdout.trim()).toBe(id);

    expect(
      runCli(["session", "command", "add authentication to API", "--status", "completed", "--workflow", "complete_system", "--duration", "420"], { stateDir })
        .code,
    ).toBe(0);
    expect(runCli(["session", "file", "src/auth/middleware.ts", "--summary", "Added JWT validation", "--workflow", "complete_system"], { stateDir }).code).toBe(
      0,
    );
    expect(
      runCli(
        [
          "session",
          "snapshot",
          "--task",
          "Building authentication",
          "--next",
          "Add refresh tokens",
          "--next",
          "Rate limiting",
          "--blocker",
          "no test database",
        ],
        { stateDir },
      ).code,
    ).toBe(0);

    const shown = runCli(["session", "show"], { stateDir });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`Session ${id} (active`);
    expect(shown.stdout).toContain("Current focus: Building authentication");
    expect(shown.stdout).toContain("  - src/auth/middleware.ts (1 change)");
    expect(shown.stdout).toContain("Next steps (2):\n  - Add refresh tokens\n  - Rate limiting");
    expect(shown.stdout).toContain("Blocking issues (1):\n  - no test database");

    const json = JSON.parse(runCli(["session", "show", id, "--json"], { stateDir }).stdout);
    expect(json).toMatchObject({ session_id: id, statistics: { total_commands: 1, total_files_modified: 1 }, workflows_used: { complete_system: 1 } });

    const reset = JSON.parse(runCli(["session", "reset", "--json"], { stateDir }).stdout);
    expect(reset.ended).toBe(id);
    const listed = JSON.parse(runCli(["session", "list", "--json"], { stateDir }).stdout);
    expect(listed.map((s: { sessionId: string; state: string }) => [s.sessionId, s.state])).toEqual(
      expect.arrayContaining([
        [id, "ended"],
        [reset.started, "active"],
      ]),
    );
  });

  it("shows another tool's session file given by path, and fails with exit 1 on bad input", () => {
    const external = path.join(tempStateDir(), "..", "CLAUDE-session-state.json");
    fs.writeFileSync(
      external,
      JSON.stringify({
        created_at: "2025-01-26T09:00:00Z",
        last_updated: "2025-01-26T12:30:00Z",
        context_snapshot: { active_task: "User registration system" },
        files_modified: { "src/routes/users.ts": { modification_count: 2 } },
      }),
    );
    const shown = runCli(["session", "show", "--file", external], { stateDir: tempStateDir() });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("Current focus: User registration system");
    expect(shown.stdout).toContain("src/routes/users.ts (2 changes)");

    const bad = runCli(["session", "command", "x", "--status", "bogus"], { stateDir: tempStateDir() });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Invalid status "bogus"');
    expect(runCli(["session", "command", "x"], { stateDir: tempStateDir() }).code).toBe(2);
    expect(runCli(["session", "show"], { stateDir: tempStateDir() }).code).toBe(1);
  });
});
