import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openTracker, type Recording } from "../../lib/tracker";
import { aRecording, aTracker, readRaw, tempForeignDir, tempParent, tempStateDir } from "../helpers/stateDir";
import { LOOK_ALIKES, SECRETS, type SecretSample } from "../helpers/secrets";
import { thrown } from "../helpers/thrown";
import { aGatewayRequest, writeRequestFile } from "../helpers/builders";
import { treeSnapshot } from "../helpers/treeSnapshot";

afterEach(() => {
  vi.unstubAllEnvs();
});

/** Every file under the state folder (the index and its WAL included), as text. */
function everythingWritten(stateDir: string): string {
  const read = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? read(full) : [fs.readFileSync(full, "latin1")];
    });
  return read(stateDir).join("\n");
}

function ok<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(`expected ok, got: ${result.error.message}`);
  return result.value;
}

/** One of each write that records text: a request's prompt, output and errors, a result marker, and everything a session records. */
function recordEverywhere({ tracker, reader }: Recording, line: string) {
  const created = tracker.create({ requestId: "prompted", workspace: "ws", state: "queued", prompt: `fix the deploy: ${line}` });
  const claim = tracker.claimNext({ workspace: "ws" })!;
  tracker.recordResult("prompted", claim.token, { outcome: "completed", fields: { output: `ran ${line}` } });
  const marker = fs.readFileSync(path.join(reader.stateDir.resultsDir, "prompted.json"), "utf8");
  const completed = tracker.complete("prompted", claim.token, { output: `ran ${line}` });

  tracker.create({ requestId: "failing", workspace: "ws", state: "queued", maxAttempts: 2 });
  const first = tracker.claimNext({ workspace: "ws" })!;
  const retried = tracker.fail("failing", first.token, `attempt 1: ${line}`);
  tracker.update("failing", { fields: { notBefore: 0 } });
  const second = tracker.claimNext({ workspace: "ws" })!;
  const failed = tracker.fail("failing", second.token, `attempt 2: ${line}`);

  tracker.create({ requestId: "updated", workspace: "ws" });
  tracker.transition("updated", "processing", { fields: { output: `partial: ${line}` } });
  const updated = tracker.update("updated", () => ({
    to: "failed",
    fields: { error: `gave up: ${line}`, callback: { success: false, attempts: 1, retryTimestamps: [], error: `POST failed: ${line}` } },
  }));

  ok(tracker.sessions.recordCommand({ command: line, status: "completed" }));
  ok(tracker.sessions.recordFile({ path: "deploy/.env", summary: `set ${line}` }));
  ok(tracker.sessions.recordFile({ path: `notes/${line}.txt` }));
  const session = ok(
    tracker.sessions.updateSnapshot({
      activeTask: `deploying with ${line}`,
      completedSteps: [`tried ${line}`],
      nextSteps: [`rotate ${line}`],
      keyFiles: [`deploy/${line}`],
      blockingIssues: [`401 for ${line}`],
    }),
  );
  return { created, marker, completed, retried, failed, updated, session };
}

describe("secrets in what reqwatch records", () => {
  it.each(SECRETS.map((sample) => [sample.kind, sample] as const))("a %s is in no file of the state folder, only its marker", (_kind, sample: SecretSample) => {
    const stateDir = tempStateDir();
    const recording = aRecording({ stateDir });
    const seen = recordEverywhere(recording, sample.line);
    const mark = `[redacted: ${sample.kind}]`;

    expect(everythingWritten(stateDir)).not.toContain(sample.secret);
    expect(seen.created.prompt).toContain(mark);
    expect(seen.marker).toContain(mark);
    expect(seen.completed.request.output).toContain(mark);
    expect(seen.retried.request.transitions?.at(-1)?.error).toContain(mark);
    expect(seen.failed.request.error).toContain(mark);
    expect(seen.updated).toMatchObject({
      output: expect.stringContaining(mark),
      error: expect.stringContaining(mark),
      callback: { error: expect.stringContaining(mark) },
    });
    const { commands_executed, files_modified, context_snapshot, patterns_detected } = seen.session;
    expect(commands_executed?.[0]?.command).toContain(mark);
    expect(files_modified?.["deploy/.env"]?.changes_summary).toContain(mark);
    expect(Object.keys(files_modified ?? {}).filter((file) => file.startsWith("notes/"))).toEqual([expect.stringContaining(mark)]);
    for (const text of [
      context_snapshot?.active_task,
      ...(context_snapshot?.completed_steps ?? []),
      ...(context_snapshot?.next_steps ?? []),
      ...(context_snapshot?.key_files ?? []),
      ...(context_snapshot?.blocking_issues ?? []),
    ]) {
      expect(text).toContain(mark);
    }
    // Patterns are words of the command as recorded, so no piece of the secret.
    for (const pattern of patterns_detected ?? []) if (!pattern.startsWith("area:")) expect(commands_executed?.[0]?.command?.toLowerCase()).toContain(pattern);
    // Nor a word of the marker, which says what was there, not what the session did.
    expect(patterns_detected).not.toContain("redacted");
    // What the calls return is what was written.
    expect(recording.tracker.get("prompted")).toEqual(seen.completed.request);
    expect(JSON.parse(readRaw(stateDir, "failing"))).toEqual(seen.failed.request);
  });

  it("writes text that only looks like a secret as it was given", () => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    const text = LOOK_ALIKES.join("\n");
    tracker.create({ requestId: "plain", workspace: "ws", prompt: text, output: text });
    ok(tracker.sessions.recordCommand({ command: text, status: "completed" }));
    expect(tracker.get("plain")).toMatchObject({ prompt: text, output: text });
    expect(tracker.sessions.get(tracker.sessions.current()!)?.commands_executed?.[0]?.command).toBe(text);
  });

  it("reports the same failure twice as a duplicate when its error held a secret", () => {
    const tracker = aTracker();
    const line = SECRETS[0]!.line;
    tracker.create({ requestId: "twice", workspace: "ws", state: "queued", maxAttempts: 1 });
    const claim = tracker.claimNext()!;
    expect(tracker.fail("twice", claim.token, line).outcome).toBe("applied");
    expect(tracker.fail("twice", claim.token, line).outcome).toBe("duplicate");
  });

  it("leaves raw the fields a user names (redact.raw), and redacts the others", () => {
    const [github, postgres] = [SECRETS.find((s) => s.kind === "github token")!, SECRETS.find((s) => s.kind === "password in url")!];
    const tracker = aTracker({ redact: { raw: ["prompt", "command"] } });
    const request = tracker.create({ requestId: "raw", workspace: "ws", prompt: github.line, output: postgres.line });
    expect(request.prompt).toBe(github.line);
    expect(request.output).not.toContain(postgres.secret);
    ok(tracker.sessions.recordCommand({ command: github.line, status: "completed" }));
    const session = ok(tracker.sessions.recordFile({ path: "a.ts", summary: github.line }));
    expect(session.commands_executed?.[0]?.command).toBe(github.line);
    expect(session.files_modified?.["a.ts"]?.changes_summary).toBe("git clone https://x-access-token:[redacted: github token]@github.com/acme/app.git");
  });

  it("takes the raw fields and extra patterns from REQWATCH_REDACT_RAW and REQWATCH_REDACT_PATTERNS", () => {
    vi.stubEnv("REQWATCH_REDACT_RAW", " output , error ");
    vi.stubEnv("REQWATCH_REDACT_PATTERNS", JSON.stringify({ "internal token": "itk_[A-Za-z0-9]{32}" }));
    const internal = `itk_${"Zx9q".repeat(8)}`;
    const line = SECRETS[0]!.line;
    const tracker = aTracker();
    const request = tracker.create({ requestId: "env", workspace: "ws", prompt: `${line} ${internal}`, output: line, error: internal });
    expect(request.prompt).toBe("export OPENAI_API_KEY=[redacted: openai api token] [redacted: internal token]");
    expect(request).toMatchObject({ output: line, error: internal });

    vi.stubEnv("REQWATCH_REDACT_RAW", "all");
    expect(aTracker().create({ workspace: "ws", prompt: line }).prompt).toBe(line);
    // The option wins over the environment.
    expect(aTracker({ redact: { raw: [] } }).create({ workspace: "ws", prompt: line }).prompt).not.toContain(SECRETS[0]!.secret);
  });

  it.each([
    ["an unknown field", { redact: { raw: ["promt"] } }, {}, `Option "redact.raw": unknown field "promt" should be "prompt"`],
    ["a list that is not one", { redact: { raw: "prompt" } }, {}, `Option "redact.raw" must be "all" or a list of fields`],
    ["an unknown key", { redact: { fields: [] } }, {}, `Unknown option "redact.fields" (known: raw, patterns).`],
    [
      "an invalid regular expression",
      { redact: { patterns: { ticket: "tk_[a-z" } } },
      {},
      `Option "redact.patterns": the pattern for "ticket" is not a valid regular expression`,
    ],
    ["a pattern matching empty text", { redact: { patterns: { ticket: "x*" } } }, {}, `the pattern for "ticket" matches empty text`],
    ["a kind that would break the marker", { redact: { patterns: { "a]b": "x+" } } }, {}, `the kind "a]b" must be 1 to 40 letters`],
    ["an unknown field in the environment", {}, { REQWATCH_REDACT_RAW: "prompt,ouput" }, `REQWATCH_REDACT_RAW: unknown field "ouput" should be "output"`],
    ["patterns that are not JSON", {}, { REQWATCH_REDACT_PATTERNS: "ticket=tk_" }, "REQWATCH_REDACT_PATTERNS must be a JSON object of kind and pattern"],
    [
      "an invalid pattern in the environment",
      {},
      { REQWATCH_REDACT_PATTERNS: '{"ticket": "(tk_"}' },
      `REQWATCH_REDACT_PATTERNS: the pattern for "ticket" is not a valid regular expression`,
    ],
  ])("refuses %s at open, before the folder is made", (_label, options, env, message) => {
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    const stateDir = path.join(tempParent(), "new-state");
    const error = thrown(() => openTracker({ stateDir, ...(options as object) }));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.message).toContain(message);
    expect(fs.existsSync(stateDir)).toBe(false);
  });

  it("writes nothing into a folder it observes, secrets or not", () => {
    const stateDir = tempForeignDir();
    writeRequestFile(stateDir, aGatewayRequest("theirs"));
    const before = treeSnapshot(stateDir);
    const tracker = aTracker({ stateDir });
    expect(thrown(() => tracker.create({ requestId: "x", workspace: "ws", prompt: SECRETS[0]!.line })).code).toBe("READ_ONLY");
    expect(tracker.sessions.recordCommand({ command: SECRETS[0]!.line, status: "completed" })).toMatchObject({ ok: false, error: { code: "READ_ONLY" } });
    tracker.close();
    expect(treeSnapshot(stateDir)).toEqual(before);
  });
});
