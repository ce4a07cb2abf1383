import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { aRequest, writeRequestFile } from "../helpers/builders";
import { aRecording, tempStateDir } from "../helpers/stateDir";

// Dry runs have no database of their own: they are kept in index.db (the dry_runs table), so they share its fate.

function removeIndex(stateDir: string): void {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
}

function withFailed(): string {
  const stateDir = tempStateDir();
  for (const id of ["f1", "f2"]) writeRequestFile(stateDir, aRequest({ requestId: id, state: "failed" }));
  return stateDir;
}

it("a dry run made by a running process after index.db was deleted is kept in the new index.db, where another process's confirmation finds it", async () => {
  const stateDir = withFailed();
  const dashboard = aRecording({ stateDir }).operator;
  removeIndex(stateDir);
  const dryRun = dashboard.actions.dryRun({ kind: "retry", ids: ["f1", "f2"] });
  // An agent's server, opened after: it has only the new index.db.
  const agent = aRecording({ stateDir, recover: false });
  const entry = await agent.operator.actions.run({ kind: "retry", ids: ["f1", "f2"], dryRunId: dryRun.dryRunId });
  expect(entry).toMatchObject({ status: "done", changed: 2 });
  expect(agent.tracker.get("f1")?.state).toBe("queued");
});

it("a dry run made before index.db was deleted is gone with it: its confirmation is refused and changes nothing; a new dry run confirms", async () => {
  const stateDir = withFailed();
  const { tracker, operator } = aRecording({ stateDir });
  const dryRun = operator.actions.dryRun({ kind: "retry", ids: ["f1", "f2"] });
  removeIndex(stateDir);
  await expect(operator.actions.run({ kind: "retry", ids: ["f1", "f2"], dryRunId: dryRun.dryRunId })).rejects.toMatchObject({
    code: "BAD_INPUT",
    message: expect.stringMatching(/^Dry run \S+ is not known/),
  });
  expect(tracker.get("f1")?.state).toBe("failed");
  const again = operator.actions.dryRun({ kind: "retry", ids: ["f1", "f2"] });
  await expect(operator.actions.run({ kind: "retry", ids: ["f1", "f2"], dryRunId: again.dryRunId })).resolves.toMatchObject({ status: "done", changed: 2 });
});
