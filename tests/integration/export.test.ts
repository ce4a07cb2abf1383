import { describe, expect, it } from "vitest";
import type { RequestSummary } from "../../lib/db/queries/listRequests";
import type { Tracker } from "../../lib/tracker";
import { runCli } from "../helpers/cli";
import { aDashboard } from "../helpers/dashboard";
import { aTracker, tempStateDir } from "../helpers/stateDir";

/** The rows the table's pages list for a filter, page after page (small pages: the export must walk them all). */
function everyPage(tracker: Tracker, filter: Parameters<Tracker["list"]>[0]): RequestSummary[] {
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
    tracker.create({ requestId: `r${String(i).padStart(2, "0")}`, workspace: i % 2 ? "odd" : "even", state: "processing", model: i === 3 ? '=HYPERLINK("x"), "quoted"' : "sonnet" });
    if (i % 4 !== 0) tracker.transition(`r${String(i).padStart(2, "0")}`, "failed", { fields: { error: "boom" } });
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
    expect(csv.stdout.trimEnd().split("\r\n").slice(1).map((line) => line.split(",")[0])).toEqual(expected.map((row) => row.requestId));

    expect(runCli(["list", "--format", "csv", "--json"], { stateDir }).code).toBe(2);
    expect(runCli(["list", "--format", "xml"], { stateDir }).code).toBe(2);
  });
});
