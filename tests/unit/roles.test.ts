import fs from "node:fs";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { isReqwatchError } from "../../lib/model/errors";
import type { Operator } from "../../lib/roles/operator";
import type { Reader } from "../../lib/roles/reader";
import type { Recording, Upkeep } from "../../lib/roles/recording";
import { openRoles } from "../../lib/tracker";
import { anOldCompletedRequest, writeRequestFile } from "../helpers/builders";
import { tempForeignDir, tempStateDir } from "../helpers/stateDir";

// The roles reqwatch's own programs hold (lib/roles/): each has the few members its callers use,
// and each operation checks its own preconditions, whichever role it is reached through.
const opened: Recording[] = [];
afterEach(() => {
  for (const recording of opened.splice(0)) recording.close();
});

function open(stateDir: string): Recording {
  const recording = openRoles({ stateDir, recover: false });
  opened.push(recording);
  return recording;
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isReqwatchError(error) ? error.code : String(error);
  }
  return undefined;
}

describe("the roles of an opened folder", () => {
  it("are small: the reader reads, the operator acts, the upkeep keeps the index", () => {
    type ReaderMember =
      | "sessions"
      | "stateDir"
      | "ownership"
      | "options"
      | "get"
      | "list"
      | "listAll"
      | "countsByState"
      | "sessionsSeen"
      | "oldestCreatedAt"
      | "requestFileBytes"
      | "responseCounts"
      | "unreadableFiles"
      | "generation"
      | "queueStats"
      | "pauses"
      | "activity"
      | "workers"
      | "unfinishedBy"
      | "knownValues"
      | "stuck"
      | "retention"
      | "changesSince"
      | "feedHead"
      | "feedLastSeq"
      | "indexing";
    type OperatorMember =
      "actions" | "ownership" | "retry" | "cancel" | "cleanup" | "restore" | "pause" | "resume" | "recover" | "monitorPass" | "runRetention";
    type UpkeepMember =
      | "refresh"
      | "listBeforeIndexed"
      | "startIngest"
      | "checkIndex"
      | "startIndexGuard"
      | "rebuildIndex"
      | "backfillTextIndex"
      | "refreshSessions"
      | "pendingWaits";
    expectTypeOf<keyof Reader>().toEqualTypeOf<ReaderMember>();
    expectTypeOf<keyof Operator>().toEqualTypeOf<OperatorMember>();
    expectTypeOf<keyof Upkeep>().toEqualTypeOf<UpkeepMember>();
    expectTypeOf<keyof Reader["sessions"]>().toEqualTypeOf<"current" | "get" | "list">();
  });

  it("share one folder: what the tracker records, the reader lists and the operator acts on", () => {
    const { tracker, reader, operator } = open(tempStateDir());
    tracker.create({ requestId: "r1", workspace: "w", state: "processing" });
    tracker.transition("r1", "failed", { fields: { error: "boom" } });
    expect(reader.get("r1")?.state).toBe("failed");
    expect(reader.countsByState().failed).toBe(1);
    expect(operator.retry({ ids: ["r1"] }, { by: "test" }).retried.map((changed) => changed.requestId)).toEqual(["r1"]);
    expect(reader.get("r1")?.state).toBe("queued");
  });

  it("check their own input and ownership: bad ids and writes to an observed folder are refused, and nothing changes", () => {
    const stateDir = tempForeignDir();
    writeRequestFile(stateDir, anOldCompletedRequest("theirs"));
    const before = fs.readFileSync(`${stateDir}/requests/theirs.json`, "utf8");
    const { tracker, reader, operator } = open(stateDir);
    expect(codeOf(() => reader.get("../x"))).toBe("BAD_INPUT");
    expect(codeOf(() => reader.countsByState({ workspace: "" }))).toBe("BAD_INPUT");
    expect(codeOf(() => operator.recover())).toBe("READ_ONLY");
    expect(codeOf(() => operator.cleanup({ olderThanMs: 1 }))).toBe("READ_ONLY");
    expect(codeOf(() => tracker.claimNext())).toBe("READ_ONLY");
    expect(codeOf(() => tracker.heartbeat("theirs", "token"))).toBe("READ_ONLY");
    expect(codeOf(() => tracker.recordResult("theirs", "token", { outcome: "completed" }))).toBe("READ_ONLY");
    // A dry run only reads: it is answered.
    expect(operator.cleanup({ olderThanMs: 1, dryRun: true }).ids).toEqual(["theirs"]);
    expect(fs.readFileSync(`${stateDir}/requests/theirs.json`, "utf8")).toBe(before);
  });

  it("keep the settings as resolved at open: frozen, the same for every role", () => {
    const { tracker, reader } = open(tempStateDir());
    expect(reader.options).toBe(tracker.options);
    expect(Object.isFrozen(reader.options)).toBe(true);
  });
});
