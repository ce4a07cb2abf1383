import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Intake, LifecycleChange, Part } from "../../lib/telemetry/mapping/changes";
import { joinedParts } from "../../lib/telemetry/mapping/fold";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { tempParent } from "../helpers/stateDir";
import { readRows } from "../helpers/telemetryRows";

// One agent's turn told by its files and by its telemetry, which name its prompt and its calls each
// their own way: one turn (the store, by when its prompt was sent in its session), each call and
// tool once (mapping/fold.ts `joinedParts`, in the order each intake told them). The real CLIs run
// both ways in tests/integration/agentJoin.test.ts.

const aCall = (id: string, at: number, toldBy: Intake | undefined, fields: Part["fields"] = {}): Part => ({
  kind: "call",
  id,
  at,
  fields: { ...(toldBy && { toldBy }), ...fields },
});
const aTool = (id: string, at: number, toldBy: Intake, name: string): Part => ({ kind: "tool", id, at, fields: { toldBy, name } });

describe("a call or tool told by both intakes, each once", () => {
  it("the n-th call each told is one call, named as the files name it, the telemetry's figures where both say one", () => {
    const { parts, renamed } = joinedParts([
      aCall("resp_1", 1000, "files", { model: "gpt-5-codex", inputTokens: 100, durationMs: 40 }),
      aCall("resp_2", 2000, "files", { model: "gpt-5-codex", inputTokens: 200 }),
      aCall("span-b", 2001, "telemetry", { inputTokens: 200, outputTokens: 30, reasoningTokens: 5 }),
      aCall("span-a", 1001, "telemetry", { inputTokens: 100, outputTokens: 30 }),
    ]);
    expect(parts.map((part) => [part.id, part.fields.inputTokens, part.fields.outputTokens, part.fields.durationMs])).toEqual([
      ["resp_1", 100, 30, 40],
      ["resp_2", 200, 30, undefined],
    ]);
    expect(parts[1]!.fields.reasoningTokens).toBe(5);
    expect(renamed).toEqual(
      new Map([
        ["call span-a", "call resp_1"],
        ["call span-b", "call resp_2"],
      ]),
    );
  });

  it("one intake ahead of the other: its later calls stand alone until the other's arrive; a call only one knows of (a router's) is never paired", () => {
    const { parts } = joinedParts([
      aCall("message:1", 1000, "files"),
      aCall("message:2", 3000, "files"),
      aCall("event-1", 1002, "telemetry"),
      aCall("router-1", 900, undefined, { name: "router" }),
    ]);
    expect(parts.map((part) => part.id)).toEqual(["message:1", "message:2", "router-1"]);
  });

  it("tools are paired per tool, in the order each intake told their uses", () => {
    const { parts, renamed } = joinedParts([
      aTool("read_file-1", 10, "files", "read_file"),
      aTool("ls-1", 12, "files", "ls"),
      aTool("t:ls", 13, "telemetry", "ls"),
      aTool("t:read", 11, "telemetry", "read_file"),
    ]);
    expect(parts.map((part) => part.id)).toEqual(["read_file-1", "ls-1"]);
    expect(renamed.get("tool t:ls")).toBe("tool ls-1");
  });
});

describe("a turn told by both intakes, one turn", () => {
  const SESSION = "01a224b7-221b-73e2-8094-2b2dd9bef6ce";
  const change = (key: string, by: Intake, at: number, session = SESSION): LifecycleChange => ({
    kind: "turn",
    keys: [key],
    service: "codex_exec",
    session,
    promptSent: { by, session, at },
    step: { key: `${key}:prompt`, at, name: by === "files" ? "prompt" : "user_prompt", summary: "", detail: {} },
    facts: { startedAt: at, prompt: "say hello" },
  });

  function aStore() {
    const file = path.join(tempParent(), "telemetry.db");
    const store = new TelemetryStore(file, { keepMs: 86_400_000, maxBytes: 200e6 });
    const keep = (...changes: LifecycleChange[]) => store.keep({ signal: "logs", records: changes.length, rejected: 0, changes, unmapped: [] });
    const turns = () =>
      readRows<{ seq: number; steps: number }>(
        file,
        "SELECT seq, (SELECT count(*) FROM steps WHERE steps.seq = lifecycles.seq) AS steps FROM lifecycles ORDER BY seq",
      );
    return { store, keep, turns };
  }

  it("its prompt, in the same session and sent within a second by each: one turn of both steps, in whichever order they came", () => {
    for (const order of [
      ["files", "telemetry"],
      ["telemetry", "files"],
    ] as const) {
      const { store, keep, turns } = aStore();
      const told = { files: change("turn:1", "files", 10_000), telemetry: change("trace:1", "telemetry", 10_400) };
      keep(told[order[0]]);
      keep(told[order[1]]);
      expect(turns()).toEqual([expect.objectContaining({ steps: 2 })]);
      store.close();
    }
  });

  it("two turns each intake told of one session, seconds apart: two turns, each joined to its own; another session's prompt, or one past a second, is its own", () => {
    const { store, keep, turns } = aStore();
    keep(change("turn:1", "files", 10_000), change("turn:2", "files", 14_000));
    keep(change("trace:2", "telemetry", 14_050), change("trace:1", "telemetry", 10_050));
    expect(turns().map((turn) => turn.steps)).toEqual([2, 2]);
    // Already joined: a third telling of the first prompt's time is not made part of it.
    keep(change("trace:3", "telemetry", 10_060));
    keep(change("trace:4", "telemetry", 10_000, "another-session"), change("trace:5", "telemetry", 16_000));
    expect(turns().map((turn) => turn.steps)).toEqual([2, 2, 1, 1, 1]);
    store.close();
  });
});
