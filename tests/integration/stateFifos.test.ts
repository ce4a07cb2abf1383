import fs from "node:fs";
import path from "node:path";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { afterEach, describe, expect, it } from "vitest";
import { readRegularFile } from "../../lib/fs/readRegularFile";
import { startOtelExport, type OtelExportHandle } from "../../lib/otel/otelExport";
import { holderFile, liveHolder } from "../../lib/process/holderFile";
import { currentProcess } from "../../lib/process/liveness";
import { aClock } from "../helpers/clock";
import { aFifo, feedFifo } from "../helpers/fifo";
import { aCollector, waitFor } from "../helpers/otlpCollector";
import { aRecording, tempParent } from "../helpers/stateDir";

// A FIFO (a named pipe) where reqwatch expects one of its JSON files: opening it to read would wait
// for a writer, and freeze the process that serves every page. Each FIFO here is fed by a child
// process with what the file would say, so a reader that opened it reads that and the test fails on
// it, rather than hanging the run.
const FIFO = "is a FIFO (a named pipe), not a regular file";

const exports: OtelExportHandle[] = [];
afterEach(async () => {
  await Promise.all(exports.splice(0).map((handle) => handle.stop()));
});

describe("a FIFO where reqwatch expects a JSON file is not opened", () => {
  it("a pause file: its workspace stays paused and says why its file was not read; the other pauses load", async () => {
    const { tracker, reader, operator } = aRecording();
    operator.pause("gateway", { by: "cli", reason: "deploy" });
    const fifo = aFifo(path.join(reader.stateDir.pausedDir, "batch.json"));
    await feedFifo(fifo, JSON.stringify({ workspace: "batch", pausedAt: 1, by: "read from the FIFO" }));
    expect(reader.pauses()).toEqual([
      { workspace: "batch", pausedAt: null, by: null, reason: `its pause file ${FIFO}; resume the workspace to remove it` },
      { workspace: "gateway", pausedAt: expect.any(Number), by: "cli", reason: "deploy" },
    ]);
    expect(tracker.claimNext({ workspace: "batch" })).toBeNull();
  });

  it("a result marker: no result is taken from it; the monitor judges the claim by its worker", async () => {
    const clock = aClock(1_800_000_000_000);
    const { tracker, reader, operator } = aRecording({ now: clock.now, heartbeatTimeoutMs: 1000 });
    tracker.create({ requestId: "r1", workspace: "gw", state: "queued" });
    const claim = tracker.claimNext()!;
    clock.advance(5000);
    const fifo = aFifo(path.join(reader.stateDir.resultsDir, "r1.json"));
    await feedFifo(
      fifo,
      JSON.stringify({ requestId: "r1", token: claim.token, outcome: "completed", fields: { output: "read from the FIFO" }, writtenAt: clock.now() }),
    );
    const pass = operator.monitorPass();
    expect(pass.counts).toMatchObject({ resultsApplied: 0, stuckAlive: 1 });
    expect(tracker.get("r1")?.state).toBe("processing");
    expect(tracker.get("r1")).not.toHaveProperty("output");
  });

  it("a holder file: no process holds it, and the next holder takes its place", async () => {
    const file = aFifo(path.join(tempParent(), "holder.json"));
    // This process: read, the file would say it holds it, and nothing would replace the FIFO.
    await feedFifo(file, JSON.stringify(currentProcess()));
    expect(liveHolder(file)).toBeNull();
    expect(holderFile(file).hold()).toEqual({ held: true });
    expect(fs.lstatSync(file).isFile()).toBe(true);
  });

  it("the exporter's position: it is not read, so the export starts from the beginning", async () => {
    const collector = await aCollector();
    const { tracker, reader } = aRecording();
    tracker.create({ requestId: "r1", workspace: "gw" });
    const positionFile = aFifo(path.join(tempParent(), "position.json"));
    // A position past every change: read, it would export nothing.
    await feedFifo(positionFile, JSON.stringify({ generation: reader.generation(), seq: reader.feedLastSeq() }));
    exports.push(startOtelExport(reader, { exporter: new OTLPTraceExporter({ url: collector.url }), positionFile, pollMs: 50, metrics: false }));
    await waitFor(() => collector.spans().length > 0);
    expect(collector.spans()[0]).toMatchObject({ name: "create gw" });
  });

  it("a session file: reported unreadable with the same words as a request file", async () => {
    const { tracker, reader } = aRecording();
    const fifo = aFifo(path.join(reader.stateDir.sessionsDir, "s1.json"));
    await feedFifo(fifo, JSON.stringify({ session_id: "s1" }));
    expect(() => tracker.sessions.get("s1")).toThrow(expect.objectContaining({ code: "CORRUPT_FILE", details: { reason: FIFO } }));
  });
});

describe("the one reader of a file reqwatch did not write this moment", () => {
  it("refuses a link or follows it, as asked; behind the link a FIFO is still a FIFO", async () => {
    const dir = tempParent();
    const fifo = aFifo(path.join(dir, "pipe.json"));
    await feedFifo(fifo, "{}");
    fs.writeFileSync(path.join(dir, "real.json"), "{}\n");
    fs.symlinkSync(path.join(dir, "real.json"), path.join(dir, "to-real.json"));
    fs.symlinkSync(fifo, path.join(dir, "to-pipe.json"));
    const read = (name: string, links: "refuse" | "follow") => {
      const result = readRegularFile(path.join(dir, name), { maxBytes: 1024, links });
      return "text" in result ? result.text : "missing" in result ? "missing" : result.problem;
    };
    expect([read("to-real.json", "refuse"), read("to-real.json", "follow")]).toEqual(["is a symbolic link; links are not followed", "{}\n"]);
    expect([read("to-pipe.json", "refuse"), read("to-pipe.json", "follow"), read("pipe.json", "refuse")]).toEqual([
      "is a symbolic link; links are not followed",
      FIFO,
      FIFO,
    ]);
    expect(read("none.json", "refuse")).toBe("missing");
  });

  it("reads a file of any size up to the limit whole, and refuses one past it unread", () => {
    const dir = tempParent();
    const read = (bytes: number) => {
      fs.writeFileSync(path.join(dir, "f.json"), "é".repeat(bytes / 2));
      const result = readRegularFile(path.join(dir, "f.json"), { maxBytes: 64 * 1024, links: "refuse" });
      return "text" in result ? result.text.length : "missing" in result ? "missing" : result.problem;
    };
    expect([read(0), read(2), read(64 * 1024), read(64 * 1024 + 2)]).toEqual([0, 1, 32 * 1024, "is 65538 bytes, over the 65536 bytes limit"]);
  });
});
