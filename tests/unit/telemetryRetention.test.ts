import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { exportBody } from "../../bench/claudeCodeExports.mjs";
import { decodeExport } from "../../lib/telemetry/otlp/decode";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { tempParent } from "../helpers/stateDir";
import { NO_REDACTION } from "../helpers/claudeCodeExports";
import { ingestExport } from "../../lib/telemetry/pipeline/ingestExport";

// The store's retention, on Claude Code-like exports in numbers (bench/claudeCodeExports.mjs), with
// the clock given to each call.
const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;

function aStore(maxBytes = 1e9) {
  const store = new TelemetryStore(path.join(tempParent(), "telemetry.db"), { keepMs: 24 * HOUR, maxBytes });
  const feed = (from: number, count: number, now: number) => {
    for (let n = from; n < from + count; n++) {
      const { signal, body } = exportBody(n);
      const decoded = decodeExport(signal, "protobuf", body);
      ingestExport(store, NO_REDACTION, signal, decoded, now);
    }
  };
  /** The oldest and newest times lifecycles were last received at. */
  const receivedRange = () => {
    const db = new Database(store.file, { readonly: true });
    try {
      return db.prepare("SELECT min(received_at) AS oldest, max(received_at) AS newest FROM lifecycles").get() as { oldest: number; newest: number };
    } finally {
      db.close();
    }
  };
  return { store, feed, receivedRange };
}

describe("what the receiver keeps, and for how long", () => {
  it("lifecycles not heard of for the retention go; those heard of since stay", () => {
    const { store, feed } = aStore();
    feed(0, 10, T0);
    feed(1000, 10, T0 + 23 * HOUR);
    const before = store.usage(1e6).bySession.map((row) => row.session);
    // No time budget: what goes, not how it is paced (the test below), whatever the machine's speed.
    expect(store.trim(T0 + 24 * HOUR + 1, Infinity)).toMatchObject({ more: false });
    const after = store.usage(1e6).bySession.map((row) => row.session);
    expect(after.length).toBeGreaterThan(0);
    expect(after.length).toBeLessThan(before.length);
    // What stays is what was received at the later time: a second trim then removes nothing.
    expect(store.trim(T0 + 24 * HOUR + 2, Infinity).removed).toBe(0);
    expect(store.trim(T0 + 47 * HOUR + 1, Infinity).removed).toBeGreaterThan(0);
    expect(store.usage(1e6).bySession).toEqual([]);
  });

  it("over the size cap, the oldest go until it holds nine tenths of it, in slices of work the caller can space out", () => {
    const { store, feed, receivedRange } = aStore(2 * 1024 * 1024);
    for (let round = 0; round < 12; round++) feed(round * 20, 20, T0 + round * 1000);
    expect(store.bytes()).toBeGreaterThan(2 * 1024 * 1024);
    // No time for more than one transaction: it says there is more.
    const first = store.trim(T0 + 20_000, 0);
    expect(first).toMatchObject({ more: true });
    expect(first.removed).toBeGreaterThan(0);
    let slices = 1;
    while (store.trim(T0 + 20_000, 0).more) slices++;
    expect(slices).toBeGreaterThan(1);
    expect(store.bytes()).toBeLessThanOrEqual(0.9 * 2 * 1024 * 1024);
    // The oldest went, the newest stayed.
    const { oldest, newest } = receivedRange();
    expect(oldest).toBeGreaterThan(T0);
    expect(newest).toBe(T0 + 11 * 1000);
  });
});
