import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { exportBody } from "../../bench/claudeCodeExports.mjs";
import type { LifecycleChange, LifecycleKind, Part } from "../../lib/telemetry/mapping/changes";
import { addStep, emptyTally, mergePart, modelsFilled, partKey, summarize, type FoldStep } from "../../lib/telemetry/mapping/fold";
import { mapExport as mapRecords } from "../../lib/telemetry/pipeline/mapExport";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import type { Signal, TelemetryRecord } from "../../lib/telemetry/records";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { exportsOf, NO_REDACTION } from "../helpers/claudeCodeExports";
import { tempParent } from "../helpers/stateDir";

// A lifecycle's row is its steps folded, and the store folds each new step into what it holds
// rather than reading all the steps again: the same row, whatever order and batches the records
// came in. Claude Code 2.1.332's own exports (tests/fixtures/otlp), and Claude Code-like exports in
// numbers (bench/claudeCodeExports.mjs).
const SCENARIOS = ["plain", "tool", "tool-protobuf", "retry", "exhausted", "interrupted"];

interface Received {
  signal: Signal;
  records: TelemetryRecord[];
}

function decodedOf(scenario: string): Received[] {
  return exportsOf(scenario).map(({ signal, body, encoding }) => ({ signal, records: decodeExport(signal, encoding, body).records }));
}

/** Each record on its own, as an exporter that sends one at a time would. */
const singly = (exports: Received[]) => exports.flatMap(({ signal, records }) => records.map((record) => ({ signal, records: [record] })));

/** A shuffle that is the same on every run. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The arrival orders the mapping supports: as captured, logs before spans, spans before logs, reversed, and shuffled. */
function arrivals(exports: Received[]): [string, Received[]][] {
  const bySignal = (first: Signal) => [...exports.filter((item) => item.signal === first), ...exports.filter((item) => item.signal !== first)];
  return [
    ["as captured", exports],
    ["logs before spans", bySignal("logs")],
    ["spans before logs", bySignal("traces")],
    ["reversed", [...exports].reverse()],
    ["one record at a time, logs before spans", singly(bySignal("logs"))],
    ["one record at a time, spans before logs", singly(bySignal("traces"))],
    ...[1, 2, 3, 4, 5].map((seed): [string, Received[]] => [`one record at a time, shuffled (${seed})`, shuffled(singly(exports), seed)]),
  ];
}

/** A lifecycle's steps (in any order) and parts (merged per call or tool use) folded at once, as the store folds them one by one. */
function foldLifecycle(kind: LifecycleKind, steps: readonly FoldStep[], parts: readonly Part[]): ReturnType<typeof summarize> {
  const tally = emptyTally(kind);
  for (const step of steps) addStep(tally, step);
  for (const part of parts) tally.parts.set(partKey(part), mergePart(tally.parts.get(partKey(part)), part));
  modelsFilled(tally);
  return summarize(tally);
}

function aStore(file = path.join(tempParent(), "telemetry.db")) {
  const store = new TelemetryStore(file, { keepMs: 24 * 3600_000, maxBytes: 1e9 });
  const feed = (exports: Received[]) => {
    for (const { signal, records } of exports) ingestExport(store, NO_REDACTION, signal, { records, rejected: 0 }, 1_800_000_000_000);
  };
  return { store, file, feed };
}

/** Every lifecycle's row (without its seq, which says which record came first), and its row folded afresh from the steps and parts kept. */
function read(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare("SELECT * FROM lifecycles").all() as Record<string, unknown>[];
    const read = rows.map(({ seq, ...row }) => {
      const steps = (db.prepare("SELECT step_key AS key, at, name, summary, facts FROM steps WHERE seq = ?").all(seq) as (FoldStep & { facts: string })[]).map(
        (step) => ({ ...step, facts: JSON.parse(step.facts) as FoldStep["facts"] }),
      );
      const parts = (db.prepare("SELECT kind, id, at, fields FROM parts WHERE seq = ?").all(seq) as (Part & { fields: string })[]).map((part) => ({
        ...part,
        fields: JSON.parse(part.fields) as Part["fields"],
      }));
      return { row, afresh: foldLifecycle(row.kind as LifecycleKind, steps, parts) };
    });
    return read.sort((a, b) => (JSON.stringify(a.row) < JSON.stringify(b.row) ? -1 : 1));
  } finally {
    db.close();
  }
}

/** A row as the store writes it from a fold. */
const columns = (row: Record<string, unknown>) => ({
  state: row.state,
  startedAt: row.started_at,
  queuedAt: row.queued_at,
  processingAt: row.processing_at,
  finishedAt: row.finished_at,
  firstAt: row.first_at,
  lastAt: row.last_at,
  prompt: row.prompt,
  output: row.output,
  error: row.error,
  model: row.model,
  attempt: row.attempt,
  lastStep: row.last_step,
  calls: row.calls,
  tools: row.tools,
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  cacheReadTokens: row.cache_read_tokens,
  cacheWriteTokens: row.cache_write_tokens,
  costUsd: row.cost_usd,
  estimatedCalls: row.estimated_calls,
  unpricedCalls: row.unpriced_calls,
  waitingOn: row.waiting_on,
  abandonedBy: row.abandoned_by,
  abandonedAt: row.abandoned_at,
});

describe("folding a lifecycle step by step", () => {
  it("a turn's steps added a batch at a time, in any arrival order, add up to what folding them all at once gives", () => {
    for (const scenario of SCENARIOS) {
      const changes = (exports: Received[]) => exports.flatMap(({ records }) => mapRecords(records).changes).filter((change) => change.kind === "turn");
      const stepOf = (change: LifecycleChange): FoldStep => ({
        key: change.step.key,
        at: change.step.at,
        name: change.step.name,
        summary: change.step.summary,
        facts: change.facts,
      });
      const captured = changes(decodedOf(scenario));
      const parts = captured.flatMap((change) => (change.facts.part ? [change.facts.part] : []));
      const atOnce = foldLifecycle("turn", captured.map(stepOf), parts);
      expect(atOnce.state, scenario).not.toBe("created");
      for (const [order, exports] of arrivals(decodedOf(scenario))) {
        const tally = emptyTally("turn");
        let last = summarize(tally);
        for (const { records } of exports) {
          for (const change of changes([{ signal: "logs", records }])) {
            addStep(tally, stepOf(change));
            if (change.facts.part) tally.parts.set(partKey(change.facts.part), mergePart(tally.parts.get(partKey(change.facts.part)), change.facts.part));
          }
          last = summarize(tally);
        }
        expect(last, `${scenario}, ${order}`).toEqual(atOnce);
      }
    }
  });

  it("the store's rows are the same however the records arrive, and the same as its steps and parts folded afresh", () => {
    for (const scenario of SCENARIOS) {
      const together = aStore();
      together.feed([{ signal: "logs", records: decodedOf(scenario).flatMap((item) => item.records) }]);
      const expected = read(together.file);
      expect(expected.length, scenario).toBeGreaterThan(0);
      for (const { row, afresh } of expected) expect(columns(row), scenario).toEqual(afresh);
      together.store.close();
      for (const [order, exports] of arrivals(decodedOf(scenario))) {
        const { store, file, feed } = aStore();
        feed(exports);
        // And once more: an exporter's retry changes nothing.
        feed(exports);
        expect(read(file), `${scenario}, ${order}`).toEqual(expected);
        store.close();
      }
    }
  });

  it("many turns at once, across exports that split them, come out as they do from one export", () => {
    const exports = Array.from({ length: 6 }, (_, n) => {
      const { signal, body } = exportBody(n);
      return { signal, records: decodeExport(signal, "protobuf", body).records };
    });
    const together = aStore();
    together.feed([{ signal: "logs", records: exports.flatMap((item) => item.records) }]);
    const expected = read(together.file);
    together.store.close();
    // Batches of seven records cut every turn (eight log events, four spans) across exports.
    const cut = shuffled(
      exports.flatMap(({ signal, records }) =>
        Array.from({ length: Math.ceil(records.length / 7) }, (_, i) => ({ signal, records: records.slice(i * 7, i * 7 + 7) })),
      ),
      7,
    );
    const { store, file, feed } = aStore();
    feed(cut);
    expect(read(file)).toEqual(expected);
    store.close();
  });

  it("a store opened again folds on from the steps it kept", () => {
    for (const scenario of ["tool", "exhausted"]) {
      const together = aStore();
      together.feed(decodedOf(scenario));
      const expected = read(together.file);
      together.store.close();
      const records = singly(decodedOf(scenario));
      const first = aStore();
      first.feed(records.slice(0, Math.floor(records.length / 2)));
      first.store.close();
      const again = aStore(first.file);
      again.feed(records.slice(Math.floor(records.length / 2)));
      expect(read(again.file), scenario).toEqual(expected);
      again.store.close();
    }
  });

  it("what another connection wrote to the store is folded in, not overwritten from what this one held", () => {
    const records = singly(decodedOf("tool"));
    const together = aStore();
    together.feed(records);
    const expected = read(together.file);
    together.store.close();
    // Two receivers on one store (two dashboards on one folder), taking turns with the same turn's records.
    const one = aStore();
    const other = aStore(one.file);
    records.forEach((item, i) => (i % 2 === 0 ? one : other).feed([item]));
    expect(read(one.file)).toEqual(expected);
    one.store.close();
    other.store.close();
  });
});
