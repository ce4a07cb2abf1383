import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { RequestSummary } from "../../lib/types";
import type { Tracker } from "../../lib/types";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { BIN, runCli } from "../helpers/cli";
import { aDashboard } from "../helpers/dashboard";
import { childEnv, eventually, WORKERS } from "../helpers/processes";
import { aRecording, aTracker, tempStateDir } from "../helpers/stateDir";

/** The rows the table's pages list for a filter, page after page (small pages: the export must walk them all). */
function everyPage(tracker: Pick<Tracker, "list">, filter: Parameters<Tracker["list"]>[0]): RequestSummary[] {
  const rows: RequestSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = tracker.list({ ...filter, limit: 7, ...(cursor && { cursor }) });
    rows.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return rows;
}

function fill(tracker: Tracker): void {
  for (let i = 0; i < 40; i++) {
    tracker.create({
      requestId: `r${String(i).padStart(2, "0")}`,
      workspace: i % 2 ? "odd" : "even",
      state: "processing",
      model: i === 3 ? '=HYPERLINK("x"), "quoted"' : "sonnet",
    });
    if (i % 4 !== 0) tracker.transition(`r${String(i).padStart(2, "0")}`, "failed", { fields: { error: "boom" } });
  }
}

/** `count` finished requests written as files (the tracker indexes them at open), each updated a millisecond after the one before. */
function manyFinished(stateDir: string, count: number, extra: Record<string, unknown> = {}): string[] {
  const ids = Array.from({ length: count }, (_, i) => `m${String(i).padStart(5, "0")}`);
  const start = Date.now() - 10 * 60_000;
  ids.forEach((requestId, i) =>
    writeRequestFile(stateDir, aRequest({ requestId, state: "completed", createdAt: start, lastUpdatedAt: start + i, counter: 0, ...extra })),
  );
  return ids;
}

/** Another process updates each of `ids` once (so each moves to the top of a newest-updated-first order), and exits. */
function updateInAnotherProcess(stateDir: string, ids: readonly string[]): void {
  const writer = spawnSync(process.execPath, [path.join(WORKERS, "incrementCounters.cjs"), stateDir, String(ids.length), ...ids], {
    env: childEnv(),
    encoding: "utf8",
  });
  expect(writer.status, writer.stderr).toBe(0);
}

/**
 * Read `stream` to its end, but once its first chunk has come, stop reading (the writer on the
 * other side waits once the pipe or socket is full) and run `meanwhile` before reading on.
 */
function readWithAPause(stream: Readable, meanwhile: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    let paused = false;
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      text += chunk;
      if (paused) return;
      paused = true;
      stream.pause();
      try {
        meanwhile();
      } catch (error) {
        reject(error as Error);
        return;
      }
      stream.resume();
    });
    stream.on("end", () => resolve(text));
    stream.on("error", reject);
  });
}

function linkOf(file: string): string {
  try {
    return fs.readlinkSync(file);
  } catch {
    return ""; // Closed meanwhile.
  }
}

const parseJsonl = (text: string) =>
  text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as RequestSummary);

describe("export of the table's filter", () => {
  it("GET /api/export streams every matching request as JSON Lines or CSV, equal to the table's pages", async () => {
    const { tracker, ask } = await aDashboard();
    fill(tracker);
    const expected = everyPage(tracker, { states: ["failed"], workspace: "odd", sort: "createdAt", order: "asc" });
    expect(expected.length).toBe(20);

    const jsonl = await ask("/api/export?format=jsonl&states=failed&workspace=odd&sort=createdAt&order=asc");
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
    expect(jsonl.headers["content-disposition"]).toBe('attachment; filename="requests.jsonl"');
    expect(parseJsonl(jsonl.text)).toEqual(expected);

    const csv = await ask("/api/export?format=csv&states=failed&workspace=odd&sort=createdAt&order=asc");
    const lines = csv.text.trimEnd().split("\r\n");
    expect(lines[0]).toBe("requestId,workspace,state,previousState,stateSince,createdAt,lastUpdatedAt,attempt,sessionId,chatId,model,tokens,version");
    expect(lines.slice(1).map((line) => line.split(",")[0])).toEqual(expected.map((row) => row.requestId));
    // A cell a spreadsheet would run as a formula is quoted as text; quotes and commas survive.
    expect(lines.find((line) => line.startsWith("r03,"))).toContain(`"'=HYPERLINK(""x""), ""quoted"""`);
    expect(lines[1]!.split(",")[4]).toBe(new Date(expected[0]!.stateSince).toISOString());
  });

  it("refuses a bad format or filter before sending anything", async () => {
    const { ask } = await aDashboard();
    for (const path of ["/api/export", "/api/export?format=xml", "/api/export?format=csv&states=bogus"]) {
      const response = await ask(path);
      expect(response.status, path).toBe(400);
      expect(response.json<{ error: { code: string } }>().error.code, path).toBe("BAD_INPUT");
    }
  });

  it("reqwatch list --format jsonl|csv writes every page of the filter; it cannot be combined with --json or --cursor", () => {
    const stateDir = tempStateDir();
    const tracker = aTracker({ stateDir });
    fill(tracker);
    const expected = everyPage(tracker, { states: ["failed", "processing"] });

    const jsonl = runCli(["list", "--state", "failed,processing", "--format", "jsonl", "--limit", "3"], { stateDir });
    expect(jsonl.code).toBe(0);
    expect(parseJsonl(jsonl.stdout)).toEqual(expected);

    const csv = runCli(["list", "--state", "failed,processing", "--format", "csv"], { stateDir });
    expect(
      csv.stdout
        .trimEnd()
        .split("\r\n")
        .slice(1)
        .map((line) => line.split(",")[0]),
    ).toEqual(expected.map((row) => row.requestId));

    expect(runCli(["list", "--format", "csv", "--json"], { stateDir }).code).toBe(2);
    expect(runCli(["list", "--format", "xml"], { stateDir }).code).toBe(2);
  });

  it("reqwatch list --format jsonl writes what matched when it began, each request once, while another process updates them", async () => {
    const stateDir = tempStateDir();
    const ids = manyFinished(stateDir, 2000);
    const atStart = everyPage(aTracker({ stateDir }), {});
    expect(atStart).toHaveLength(2000);

    const cli = spawn(process.execPath, [BIN, "list", "--format", "jsonl", "--limit", "100"], {
      env: { ...childEnv(), REQWATCH_STATE_DIR: stateDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    cli.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => cli.on("close", resolve));
    // The export has begun (its first rows are out) when the oldest-updated 500, the last rows it writes, are updated.
    const text = await readWithAPause(cli.stdout, () => updateInAnotherProcess(stateDir, ids.slice(0, 500)));
    expect(await exited, stderr).toBe(0);
    expect(parseJsonl(text)).toEqual(atStart);
  });

  it("GET /api/export streams what matched when it began, each request once, while another process updates them", async () => {
    const stateDir = tempStateDir();
    const ids = manyFinished(stateDir, 8000);
    const { url, tracker } = await aDashboard({ stateDir });
    const atStart = everyPage(tracker, {});
    expect(atStart).toHaveLength(8000);

    const response = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${url}/api/export?format=jsonl`, resolve).on("error", reject));
    expect(response.statusCode).toBe(200);
    // The server runs in this process: the writer runs while the export is under way and the server waits for it.
    const text = await readWithAPause(response, () => updateInAnotherProcess(stateDir, ids.slice(0, 500)));
    expect(parseJsonl(text)).toEqual(atStart);
    // 8,000 files indexed, read twice and exported while another process writes: on two busy cores that outlasts the usual 30 s.
  }, 90_000);

  it("reader.listAll reads every page from the snapshot its first page took, while another process writes", () => {
    const stateDir = tempStateDir();
    const ids = manyFinished(stateDir, 300);
    const { tracker, reader } = aRecording({ stateDir });
    const atStart = everyPage(reader, {});
    const pages = reader.listAll({}, 50);
    const rows = [...pages.next().value!];
    updateInAnotherProcess(stateDir, ids.slice(0, 100));
    for (const page of pages) rows.push(...page);
    expect(rows).toEqual(atStart);
    // The snapshot ended with its last page: a list now sees the updates.
    expect(tracker.list({ limit: 1 }).items[0]).toMatchObject({ requestId: ids[99], version: 1 });
  });

  it("a download cancelled half way lets its spool go", async () => {
    const stateDir = tempStateDir();
    // More than the sockets between server and client hold: the server is waiting for the client to read when it goes.
    manyFinished(stateDir, 3000, { model: "m".repeat(2000) });
    const { url } = await aDashboard({ stateDir });
    // The server runs in this process: its open spools are among this process's descriptors.
    const spools = () => fs.readdirSync("/proc/self/fd").filter((fd) => linkOf(`/proc/self/fd/${fd}`).includes("reqwatch-spool-")).length;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(`${url}/api/export?format=csv`, (response) => {
        response.once("data", () => {
          expect(spools()).toBe(1);
          request.destroy();
          resolve();
        });
      });
      request.on("error", (error) => (request.destroyed ? undefined : reject(error)));
    });
    await eventually(() => (spools() === 0 ? true : undefined));
  });
});
