import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, test } from "./fixtures";

/**
 * The short version of `npm run soak`: a smaller load for 8 seconds against its own server. What
 * must hold at any load: no errors, and every change reaches every event stream, in order, once.
 * How much load the machine managed (writes per second, latency, CPU) is the soak's and the
 * bench's to measure: printed here, never asserted.
 */
test("under sustained load: no errors, and every change reaches every event stream in order with no gap", async () => {
  test.setTimeout(120_000);
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-soak-report-")), "soak.json");
  const env = {
    ...process.env,
    SOAK_SECONDS: "8",
    SOAK_API_CLIENTS: "10",
    SOAK_THINK_MS: "500",
    SOAK_SSE_CLIENTS: "5",
    SOAK_WRITERS: "2",
    SOAK_WRITES_PER_SECOND: "100",
    SOAK_REPORT: report,
  };
  const run = await promisify(execFile)(process.execPath, [path.resolve(__dirname, "../../scripts/soak.mjs")], { env }).catch((error) => error);
  const result = JSON.parse(fs.readFileSync(report, "utf8"));
  fs.rmSync(path.dirname(report), { recursive: true, force: true });
  console.log(
    run.stdout
      .split("\n")
      .filter((line: string) => line.startsWith("soak") || line.startsWith("  "))
      .join("\n"),
  );
  expect(result.writes).toMatchObject({ errors: 0 });
  // Something was written and asked, however slowly, so the delivery checks below are not empty.
  expect(result.writes.total).toBeGreaterThan(0);
  expect(result.api).toMatchObject({ errors: 0 });
  expect(result.api.requests).toBeGreaterThan(0);
  expect(result.sse).toMatchObject({ clients: 5, everyChangeDelivered: true, gaps: 0, outOfOrder: 0, resets: 0, errors: 0 });
  expect(result.sse.feedChanges).toBe(result.writes.total);
  // The control beside it (a server that does nothing) was asked too, without an error.
  expect(result.floor).toMatchObject({ clients: 5, errors: 0 });
  expect(result.floor.n).toBeGreaterThan(0);
});
