import { describe, expect, it } from "vitest";
import { openSharedTracker } from "../../lib/shared/sharedTracker";
import { postgresForFile } from "../helpers/postgres";

const cluster = postgresForFile();

describe("the shared store", () => {
  it("opens on a new database and creates a request", async () => {
    const url = await cluster().newDatabase();
    const tracker = await openSharedTracker(url);
    const created = await tracker.create({ requestId: "r1", workspace: "w", state: "queued" });
    expect(created.state).toBe("queued");
    expect(await tracker.get("r1")).toMatchObject({ state: "queued", version: 1 });
    const claim = await tracker.claimNext();
    expect(claim?.request.state).toBe("processing");
    const delivery = await tracker.complete("r1", claim!.token, { output: "ok" });
    expect(delivery.outcome).toBe("applied");
    await tracker.close();
  });
});
