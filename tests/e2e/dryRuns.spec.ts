import type { APIRequestContext } from "@playwright/test";
import type { AuditEntry } from "../../lib/db/auditLog";
import { expect, test } from "./fixtures";

/** The action API as the dashboard's dialogs call it: the page's own token, from its own origin. */
async function actionApi(request: APIRequestContext, url: string) {
  const token = /actionToken\\?"\s*:\s*\\?"([A-Za-z0-9_-]{20,})/.exec(await (await request.get(url)).text())?.[1];
  expect(token, "the page carries its action token").toBeTruthy();
  const headers = { Origin: url, "x-reqwatch-token": token! };
  return {
    dryRun: async (data: object) =>
      (await request.post(`${url}/api/actions/dry-run`, { data, headers })).json() as Promise<{ dryRunId: string; summary: string; willChange: number }>,
    run: async (data: object) => {
      const response = await request.post(`${url}/api/actions`, { data, headers });
      return { status: response.status(), body: (await response.json()) as { entry?: AuditEntry; error?: { code: string; message: string } } };
    },
    entry: async (id: number) => ((await (await request.get(`${url}/api/actions/${id}`)).json()) as { entry: AuditEntry }).entry,
  };
}

test("a confirmation acts on its dry run only when it asks the same, and a dry run outlives the server that made it", async ({
  request,
  tracker,
  launchApp,
  operator,
}) => {
  for (const [id, workspace, state] of [
    ["f-a", "alpha", "failed"],
    ["f-b", "beta", "failed"],
    ["t-z", "zzz", "timeout"],
  ] as const) {
    tracker.create({ requestId: id, workspace, state: "processing" });
    tracker.transition(id, state);
  }
  for (const id of ["C", "D"]) tracker.create({ requestId: id, workspace: "w", state: "queued" });
  const states = () => ["f-a", "f-b", "t-z", "C", "D"].map((id) => tracker.get(id)?.state);
  const before = states();

  const first = await launchApp();
  let api = await actionApi(request, first.url);
  // `within` makes a filter that moves with the clock: the confirmation is compared by the table's query.
  const retry = await api.dryRun({ kind: "retry", query: "states=failed&within=1h" });
  expect(retry).toMatchObject({ willChange: 2 });
  const otherQuery = await api.run({ kind: "retry", query: "states=timeout&workspace=zzz", dryRunId: retry.dryRunId });
  expect(otherQuery).toMatchObject({
    status: 400,
    body: {
      error: {
        code: "BAD_INPUT",
        message: expect.stringMatching(
          /^This confirmation asks "Retry every request matching timeout in zzz", but dry run \S+ was "Retry \d+ requests? matching failed created in the last \w+"\. Nothing was done/,
        ),
      },
    },
  });
  const cancel = await api.dryRun({ kind: "cancel", ids: ["C"] });
  const otherIds = await api.run({ kind: "cancel", ids: ["D"], dryRunId: cancel.dryRunId });
  expect(otherIds).toMatchObject({ status: 400, body: { error: { code: "BAD_INPUT", message: expect.stringContaining('asks "Cancel D", but dry run') } } });
  expect(states()).toEqual(before);
  expect(operator.actions.list()).toEqual([]);

  // The dashboard restarts between the dry run and its confirmation.
  await first.kill();
  const second = await launchApp();
  api = await actionApi(request, second.url);
  const cancelled = await api.run({ kind: "cancel", ids: ["C"], dryRunId: cancel.dryRunId });
  expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202);
  const retried = await api.run({ kind: "retry", query: "within=1h&states=failed", dryRunId: retry.dryRunId });
  expect(retried.status, JSON.stringify(retried.body)).toBe(202);
  for (const started of [cancelled.body.entry!, retried.body.entry!]) await expect.poll(async () => (await api.entry(started.id)).status).toBe("done");

  expect(await api.entry(cancelled.body.entry!.id)).toMatchObject({ summary: "Cancel C", target: { ids: ["C"] }, matched: 1, changedIds: ["C"] });
  const retryEntry = await api.entry(retried.body.entry!.id);
  expect(retryEntry).toMatchObject({ summary: retry.summary, matched: 2 });
  expect(retryEntry.changedIds.sort()).toEqual(["f-a", "f-b"]);
  expect(states()).toEqual(["queued", "queued", "timeout", "failed", "queued"]);
});
