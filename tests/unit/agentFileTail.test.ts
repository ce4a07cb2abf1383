import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { claudeCodeFiles } from "../../lib/telemetry/agentFiles/claudeCodeFiles";
import type { LineBounds } from "../../lib/telemetry/agentFiles/readLines";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { anAgentFollower } from "../helpers/agentFollower";
import { aClaudeFolder as claudeFolderAt } from "../helpers/claudeFolder";
import { eventually } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";
import { treeSnapshot } from "../helpers/treeSnapshot";

// The follower on real files as Claude Code appends to them: it reads only what was added, waits for
// a line's end, skips what it cannot read (counted), and starts again on a file truncated or replaced.
// Lines are the real CLI's (tests/fixtures/claude-code-transcripts), written out piece by piece.

const DAY = 24 * 3600_000;

function aFollower(folder: string, file = path.join(tempParent(), "telemetry.db"), bounds?: LineBounds) {
  const { store, follower } = anAgentFollower(claudeCodeFiles, folder, { into: { file }, bounds });
  const turns = () =>
    readRows<{ prompt: string; state: string; calls: number; session: string }>(file, "SELECT prompt, state, calls, session FROM lifecycles ORDER BY seq");
  const steps = () => readRows<{ n: number }>(file, "SELECT count(*) AS n FROM steps")[0]!.n;
  return { store, follower, file, turns, steps, close: () => void follower.close().then(() => store.close()) };
}

/** A recorded transcript's lines, and an empty file at its place to append them to. */
function anEmptyTranscript(scenario: string) {
  const { folder, transcripts } = aClaudeFolder([scenario]);
  const transcript = transcripts[scenario]!;
  const lines = fs.readFileSync(transcript, "utf8").split("\n").filter(Boolean);
  fs.writeFileSync(transcript, "");
  return { folder, transcript, lines };
}

/** A Claude folder of recorded scenarios, in a folder removed after the test. */
const aClaudeFolder = (scenarios: string[], now?: number) => claudeFolderAt(path.join(tempParent(), ".claude"), scenarios, now);

afterEach(() => vi.useRealTimers());

describe("following Claude Code's files", () => {
  it("passes over a file of the history last written before what is kept, but reads one that appears later whatever its time says", () => {
    const twoDaysAgo = Date.now() - 2 * DAY;
    const { folder } = aClaudeFolder(["plain"], twoDaysAgo);
    const reading = aFollower(folder);
    expect(reading.turns()).toEqual([]);
    // A transcript copied in since (a copy keeps its original's time): new here, read from its start.
    const copied = claudeFolderAt(path.join(tempParent(), ".claude"), ["tool"], twoDaysAgo).transcripts.tool!;
    const to = path.join(folder, "projects", "-copied", path.basename(copied));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(copied, to);
    fs.utimesSync(to, new Date(twoDaysAgo), new Date(twoDaysAgo));
    reading.follower.readAll();
    expect(reading.turns()).toEqual([expect.objectContaining({ prompt: "run echo hi, please", state: "completed" })]);
    reading.close();
  });

  it("reads only what was added since, and holds back a half-written line until it is whole", () => {
    const { folder, transcript, lines } = anEmptyTranscript("plain");
    const answer = lines.findIndex((line) => line.includes('"type":"assistant"'));
    const reading = aFollower(folder);
    fs.appendFileSync(transcript, lines.slice(0, answer).join("\n") + "\n");
    reading.follower.readAll();
    expect(reading.turns()).toEqual([expect.objectContaining({ prompt: "say hello, plainly", state: "processing", calls: 0 })]);
    // Half the answer's line: nothing of it yet.
    const half = Math.floor(lines[answer]!.length / 2);
    fs.appendFileSync(transcript, lines[answer]!.slice(0, half));
    reading.follower.readAll();
    expect(reading.turns()[0]).toMatchObject({ state: "processing", calls: 0 });
    expect(reading.follower.status().malformed).toBe(0);
    fs.appendFileSync(transcript, lines[answer]!.slice(half) + "\n" + lines.slice(answer + 1).join("\n") + "\n");
    reading.follower.readAll();
    expect(reading.turns()).toEqual([expect.objectContaining({ state: "completed", calls: 1 })]);
    expect(reading.follower.status()).toMatchObject({ files: 1, lines: lines.length, malformed: 0, oversized: 0 });
    reading.close();
  });

  it("skips and counts a malformed line and a 50 MB line, never holding it whole, and reads on after them", () => {
    const { folder, transcript, lines } = anEmptyTranscript("plain");
    const answer = lines.findIndex((line) => line.includes('"type":"assistant"'));
    const reading = aFollower(folder);
    fs.appendFileSync(transcript, lines.slice(0, answer).join("\n") + "\n{not json at all\n");
    // A 50 MB line written in 1 MB pieces, read between them: the follower never gathers more than its bound (8 MB) of it.
    const piece = `{"type":"attachment","x":"${"a".repeat(1024 * 1024)}`;
    for (let i = 0; i < 50; i++) {
      fs.appendFileSync(transcript, piece);
      reading.follower.readAll();
    }
    fs.appendFileSync(transcript, '"}\n' + lines.slice(answer).join("\n") + "\n");
    reading.follower.readAll();
    expect(reading.turns()).toEqual([expect.objectContaining({ state: "completed", calls: 1 })]);
    expect(reading.follower.status()).toMatchObject({ malformed: 1, oversized: 1 });
    // At most its bound and a read's chunk of the line's 50 MB was ever held.
    expect(reading.follower.status().mostHeld).toBeLessThanOrEqual(9 * 1024 * 1024);
    reading.close();
  });

  it("a 500 MB transcript beside another: both read whole, in slices of a bounded size, the other's turn too", () => {
    const { folder, transcripts } = aClaudeFolder(["plain", "tool"]);
    const big = transcripts.plain!;
    const lines = fs.readFileSync(big, "utf8").split("\n").filter(Boolean);
    const answer = lines.findIndex((line) => line.includes('"type":"assistant"'));
    // Between the prompt and its answer, 500 MB of 4 MB attachment lines (each within the line bound, so each is read).
    const filler = Buffer.from(`{"type":"attachment","attachment":{"type":"file","text":"${"x".repeat(4 * 1024 * 1024 - 64)}"}}\n`);
    const fd = fs.openSync(big, "w");
    fs.writeSync(fd, lines.slice(0, answer).join("\n") + "\n");
    let fillers = 0;
    for (; fillers * filler.length < 500 * 1024 * 1024; fillers++) fs.writeSync(fd, filler);
    fs.writeSync(fd, lines.slice(answer).join("\n") + "\n");
    fs.closeSync(fd);
    expect(fs.statSync(big).size).toBeGreaterThan(500 * 1024 * 1024);
    const reading = aFollower(folder);
    reading.follower.readAll();
    expect(reading.turns().map((turn) => [turn.prompt, turn.state])).toEqual(
      expect.arrayContaining([
        ["say hello, plainly", "completed"],
        ["run echo hi, please", "completed"],
      ]),
    );
    const toolLines = fs.readFileSync(transcripts.tool!, "utf8").split("\n").filter(Boolean).length;
    expect(reading.follower.status()).toMatchObject({ files: 2, lines: lines.length + fillers + toolLines, malformed: 0, oversized: 0 });
    // Never the file whole: at most a read's slice (16 MB) and a line's bound (8 MB) at once.
    expect(reading.follower.status().mostHeld).toBeLessThanOrEqual(24 * 1024 * 1024);
    // What is kept is the lifecycle, not the transcript.
    expect(fs.statSync(reading.file).size).toBeLessThan(5 * 1024 * 1024);
    reading.close();
  });

  it("a file truncated, or replaced at its path, is read again from its start; each line still counts once", () => {
    const { folder, transcripts } = aClaudeFolder(["plain"]);
    const transcript = transcripts.plain!;
    const whole = fs.readFileSync(transcript, "utf8");
    const reading = aFollower(folder);
    const steps = reading.steps();
    expect(reading.turns()).toHaveLength(1);
    // Truncated (a rotation that empties it), then written again.
    fs.truncateSync(transcript, 0);
    reading.follower.readAll();
    fs.writeFileSync(transcript, whole);
    reading.follower.readAll();
    expect(reading.turns()).toHaveLength(1);
    expect(reading.steps()).toBe(steps);
    // Replaced by another file (a rename over it): read from its start.
    const other = aClaudeFolder(["resumed"]).transcripts.resumed!;
    fs.copyFileSync(other, `${transcript}.new`);
    fs.renameSync(`${transcript}.new`, transcript);
    reading.follower.readAll();
    expect(reading.turns().map((turn) => turn.prompt)).toEqual(["say hello, plainly", "say hello, plainly", "and a second prompt"]);
    reading.close();
  });

  it("goes on from its kept position after a restart: nothing read twice, nothing missed", () => {
    const { folder, transcript, lines } = anEmptyTranscript("resumed");
    const second = lines.findIndex((line) => line.includes("and a second prompt"));
    fs.appendFileSync(transcript, lines.slice(0, second).join("\n") + "\n");
    const file = path.join(tempParent(), "telemetry.db");
    const first = aFollower(folder, file);
    const steps = first.steps();
    first.close();
    fs.appendFileSync(transcript, lines.slice(second).join("\n") + "\n");
    const again = aFollower(folder, file);
    expect(again.turns().map((turn) => [turn.prompt, turn.state])).toEqual([
      ["say hello, plainly", "completed"],
      ["and a second prompt", "completed"],
    ]);
    expect(again.steps()).toBe(steps + 2);
    expect(again.follower.status().lines).toBe(lines.length);
    again.close();
  });

  it("its store deleted or replaced while it follows: what was read is read again into the new store, once, and what is added after too", () => {
    const { folder, transcript, lines } = anEmptyTranscript("resumed");
    const second = lines.findIndex((line) => line.includes("and a second prompt"));
    fs.appendFileSync(transcript, lines.slice(0, second).join("\n") + "\n");
    const reading = aFollower(folder);
    const before = { turns: reading.turns(), steps: reading.steps() };
    expect(before.turns).toEqual([expect.objectContaining({ prompt: "say hello, plainly", state: "completed" })]);
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(reading.file + suffix, { force: true });
    reading.follower.readAll();
    expect(reading.turns()).toEqual(before.turns);
    expect(reading.steps()).toBe(before.steps);
    reading.follower.readAll();
    expect(reading.steps()).toBe(before.steps);
    // Replaced by another store (an empty one moved in): what was read, and what was added since, read into it, each line once.
    const replacement = path.join(tempParent(), "telemetry.db");
    new TelemetryStore(replacement, { keepMs: DAY, maxBytes: 200e6 }).close();
    fs.renameSync(replacement, reading.file);
    fs.appendFileSync(transcript, lines.slice(second).join("\n") + "\n");
    reading.follower.readAll();
    expect(reading.turns().map((turn) => [turn.prompt, turn.state])).toEqual([
      ["say hello, plainly", "completed"],
      ["and a second prompt", "completed"],
    ]);
    expect(reading.steps()).toBe(before.steps + 2);
    reading.close();
  });

  it("writes nothing under Claude Code's folder: every byte and time the same after reading it", () => {
    const { folder } = aClaudeFolder(["plain", "tool", "retry", "exhausted", "killed", "resumed"]);
    const before = treeSnapshot(folder);
    const reading = aFollower(folder);
    reading.follower.readAll();
    reading.follower.checkRuns();
    expect(reading.turns()).toHaveLength(7);
    expect(treeSnapshot(folder)).toEqual(before);
    reading.close();
  });

  it("a look on its timer while the start still reads the folder leaves the unread files to the start, which reads one a turn: the thread is never held for the whole folder", async () => {
    // The look's timer is moved by hand: it comes between the start's turns, not after a wait.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const { folder } = aClaudeFolder(["plain", "tool", "retry", "resumed"]);
    const { file, store, follower } = anAgentFollower(claudeCodeFiles, folder, { live: true });
    vi.advanceTimersByTime(5000);
    expect(follower.status().files).toBe(0);
    // One turn: the start has read its first file.
    await new Promise((resolve) => setImmediate(resolve));
    const [first] = readRows<{ path: string }>(file, "SELECT path FROM agent_files");
    const { lines } = follower.status();
    expect(follower.status().files).toBe(1);
    // A line written to it since is read by the next look (a watcher can miss it); the three unread are still left to the start.
    fs.appendFileSync(first!.path, fs.readFileSync(first!.path, "utf8").trimEnd().split("\n").at(-1) + "\n");
    vi.advanceTimersByTime(5000);
    expect(follower.status()).toMatchObject({ files: 1, lines: lines + 1 });
    await eventually(() => (follower.status().files === 4 ? true : undefined));
    expect(readRows<{ n: number }>(file, "SELECT count(*) AS n FROM lifecycles")[0]!.n).toBe(5);
    await follower.close();
    store.close();
  });
});
