import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { storeUnmapped, UNMAPPED_PAGE } from "../../lib/telemetry/store/queries/unmapped";
import { TelemetryStore } from "../../lib/telemetry/store/telemetryStore";
import { tempParent } from "../helpers/stateDir";

// What no mapping knows, as the Health page pages through it: every name, the most received first, with how many there are.
describe("the received names no mapping knows", () => {
  it("are paged 50 at a time, each once, with the total; the store's own list holds them all", () => {
    const file = path.join(tempParent(), "telemetry.db");
    const store = new TelemetryStore(file, { keepMs: 3600_000, maxBytes: 200e6 });
    const names = Array.from({ length: 238 }, (_, i) => `widget.event.${String(i).padStart(3, "0")}`);
    store.keep({
      signal: "logs",
      records: names.length,
      rejected: 0,
      changes: [],
      unmapped: names.map((name) => ({ service: "widget-app", signal: "log" as const, name })),
    });
    // One name received three times comes first.
    for (let i = 0; i < 2; i++)
      store.keep({ signal: "logs", records: 1, rejected: 0, changes: [], unmapped: [{ service: "widget-app", signal: "log", name: "widget.event.237" }] });
    expect(store.unmapped()).toHaveLength(238);
    store.close();

    const db = new Database(file, { readonly: true });
    try {
      const first = storeUnmapped(db);
      expect(first).toMatchObject({ total: 238, offset: 0, limit: UNMAPPED_PAGE });
      expect(first.rows).toHaveLength(50);
      expect(first.rows[0]).toMatchObject({ name: "widget.event.237", count: 3 });
      const seen = [0, 50, 100, 150, 200].flatMap((offset) => storeUnmapped(db, { offset }).rows.map((row) => row.name));
      expect(seen).toHaveLength(238);
      expect(new Set(seen)).toEqual(new Set(names));
      expect(storeUnmapped(db, { offset: 200 }).rows).toHaveLength(38);
      expect(storeUnmapped(db, { offset: 300 })).toMatchObject({ rows: [], total: 238 });
    } finally {
      db.close();
    }
  });
});
