import { z } from "zod";
import { ReqwatchError } from "../../model/errors";
import { parseDuration } from "../../model/duration";
import { filterFields } from "../../model/listFilters";
import type { State } from "../../model/states";
import type { Operator } from "../../roles/operator";
import { ids, type McpTool, type ToolContext } from "../mcpTool";

/** Who the audit log and the requests' histories name for what an agent did through this server. */
const MCP_ACTOR = "mcp";

const CONFIRM =
  "Leave out (or false) for the dry run; true, with the dryRunId the dry run returned and the same other arguments, to act on exactly what it described (a confirmation that asks otherwise is refused).";

/** Retry and cancel (the dashboard's audited bulk actions: a dry run, then a run bound to it), and cleanup's dry run. */
export function actionTools({ operator }: ToolContext): McpTool[] {
  return [
    {
      name: "retry_requests",
      title: "Retry requests",
      description: `Send failed, timed-out, or processing requests whose worker is gone, back to the queue (by ids, or every request in the given states and workspace). ${CONFIRM} Audited in the dashboard's audit log as by mcp.`,
      inputSchema: {
        ids: ids.optional(),
        states: z.array(filterFields.state).optional().describe("instead of ids: every request in these states"),
        workspace: filterFields.workspace.optional().describe("with states: only this workspace"),
        confirm: z.boolean().optional(),
        dryRunId: z.string().optional().describe("the id the dry run returned (required with confirm)"),
      },
      annotations: { destructiveHint: false, idempotentHint: true },
      run: async ({
        ids: chosen,
        states,
        workspace,
        confirm,
        dryRunId,
      }: {
        ids?: string[];
        states?: State[];
        workspace?: string;
        confirm?: boolean;
        dryRunId?: string;
      }) => {
        const filter = states || workspace !== undefined ? { states, ...(workspace !== undefined && { workspace }) } : undefined;
        return act(operator, { kind: "retry", ids: chosen, filter }, confirm, dryRunId);
      },
    },
    {
      name: "cancel_requests",
      title: "Cancel requests",
      description: `Cancel created, queued or processing requests: they go to failed with reason cancelled, and a worker's late result is dropped. ${CONFIRM} Audited as by mcp.`,
      inputSchema: { ids, confirm: z.boolean().optional(), dryRunId: z.string().optional().describe("the id the dry run returned (required with confirm)") },
      annotations: { destructiveHint: true },
      run: ({ ids: chosen, confirm, dryRunId }: { ids: string[]; confirm?: boolean; dryRunId?: string }) =>
        act(operator, { kind: "cancel", ids: chosen }, confirm, dryRunId),
    },
    {
      name: "cleanup_dry_run",
      title: "What a cleanup would remove (dry run)",
      description:
        "A dry run only: how many finished requests a cleanup would archive and delete (not updated for olderThan; completed, failed and timeout by default). Nothing changes; a person runs the cleanup from the dashboard or with `reqwatch cleanup`.",
      inputSchema: { olderThan: z.string().describe("not updated for this long: 24h, 7d"), states: z.array(filterFields.state).optional() },
      annotations: { readOnlyHint: true },
      run: ({ olderThan, states }: { olderThan: string; states?: State[] }) => {
        const report = operator.cleanup({ dryRun: true, olderThanMs: parseDuration(olderThan, "olderThan"), ...(states && { states }) });
        return { matched: report.matched, byState: report.byState, cutoff: new Date(report.cutoff).toISOString(), firstIds: report.ids.slice(0, 20) };
      },
    },
  ];
}

type ActionInput = Parameters<Operator["actions"]["dryRun"]>[0];

/**
 * The dry run, or (confirmed) the run bound to it, as the dashboard's audited action by `mcp`. The
 * dry run is kept in the index, so a client that starts a server per call confirms it in another.
 */
async function act(operator: Operator, input: ActionInput, confirm: boolean | undefined, dryRunId: string | undefined) {
  if (!confirm) {
    const dryRun = operator.actions.dryRun(input);
    return {
      dryRun: true,
      ...dryRun,
      next: `Nothing changed. To act on exactly this, call again with the same arguments, confirm: true and dryRunId: "${dryRun.dryRunId}".`,
    };
  }
  if (!dryRunId)
    throw new ReqwatchError(
      "BAD_INPUT",
      "confirm needs a dryRunId: call without confirm first, check what it would change, then confirm with the dryRunId it returned.",
    );
  const entry = await operator.actions.run({ ...input, dryRunId }, { by: MCP_ACTOR });
  return { dryRun: false, entry };
}
