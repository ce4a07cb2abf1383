"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import type { ActionDryRun } from "@/lib/actions/actionDryRun";
import { nameIds } from "@/lib/actions/describeAction";
import type { AuditEntry } from "@/lib/db/auditLog";
import { useDashboard } from "../data/LiveFeed";
import { actionDryRunOptions, auditEntryOptions, auditKeys, requestKeys, runAction, type ActionRequest } from "../data/queries";
import { ActionResult } from "./ActionResult";
import { plural } from "@/lib/model/plural";

const WORDS: Record<ActionRequest["kind"], { verb: string; outcome: string }> = {
  retry: { verb: "Retry", outcome: "go back to queued" },
  cancel: { verb: "Cancel", outcome: "be cancelled (moved to failed; a worker's late result is dropped)" },
  cleanup: { verb: "Clean up", outcome: "be archived and removed" },
  undo: { verb: "Restore", outcome: "be restored from the archive" },
};

function describeStates(byState: ActionDryRun["byState"]): string {
  return Object.entries(byState)
    .map(([state, n]) => `${n} ${state}`)
    .join(", ");
}

/**
 * A bulk action in three steps: the dry run (how many, which states, the first ids, what would be
 * skipped and why), the confirmation, then progress and the result from the audit log.
 */
export function ActionDialog({ input, onClose }: { input: ActionRequest; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const { actionToken } = useDashboard();
  const queryClient = useQueryClient();
  const [started, setStarted] = useState<AuditEntry | null>(null);

  useEffect(() => {
    ref.current?.showModal();
  }, []);

  const dryRun = useQuery(actionDryRunOptions(actionToken, input));
  const run = useMutation({
    mutationFn: () => runAction(actionToken, input, dryRun.data!),
    onSuccess: (entry) => setStarted(entry),
  });
  const progress = useQuery({
    ...auditEntryOptions(started?.id ?? 0),
    enabled: started !== null,
    initialData: started ?? undefined,
    refetchInterval: (q) => (q.state.data?.status === "running" ? 300 : false),
  });
  const entry = progress.data ?? started;
  useEffect(() => {
    if (entry && entry.status !== "running") {
      void queryClient.invalidateQueries({ queryKey: requestKeys.all });
      void queryClient.invalidateQueries({ queryKey: auditKeys.list() });
    }
  }, [entry, queryClient]);

  const { verb, outcome } = WORDS[input.kind];
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="action-title">
      <h2 id="action-title">{dryRun.data?.summary ?? verb}</h2>
      {dryRun.isPending && <p>Working out what this would change…</p>}
      {dryRun.error && (
        <p className="error-text" role="alert">
          {dryRun.error.message}
        </p>
      )}
      {dryRun.data && !entry && (
        <section aria-label="Dry run">
          <p>
            <strong>Dry run:</strong> {dryRun.data.willChange} of {dryRun.data.matched} matching request{dryRun.data.matched === 1 ? "" : "s"} would {outcome}
            {/* An undo's dry run counts no states: its requests are in the archive. */}
            {dryRun.data.willChange > 0 && Object.keys(dryRun.data.byState).length > 0 && ` (${describeStates(dryRun.data.byState)})`}.
          </p>
          {dryRun.data.firstIds.length > 0 && <p className="muted">{nameIds(dryRun.data.firstIds, dryRun.data.willChange)}</p>}
          {dryRun.data.skipped.map((skip) => (
            <p key={skip.reason} className="muted">
              {skip.count} would be skipped: {skip.reason}
            </p>
          ))}
        </section>
      )}
      {entry && <ActionResult entry={entry} />}
      <div className="toolbar">
        <span className="spacer" />
        {!entry && (
          <button
            type="button"
            className={input.kind === "cleanup" || input.kind === "cancel" ? "danger" : "primary"}
            disabled={!dryRun.data || dryRun.data.willChange === 0 || run.isPending}
            onClick={() => run.mutate()}
          >
            {dryRun.data ? `${verb} ${plural(dryRun.data.willChange, "request")}` : verb}
          </button>
        )}
        {entry && entry.status !== "running" && (
          <Link prefetch={false} href="/audit">
            See the audit log
          </Link>
        )}
        <button type="button" onClick={() => ref.current?.close()}>
          {entry ? "Close" : `Don't ${verb.toLowerCase()}`}
        </button>
      </div>
      {run.error && (
        <p className="error-text" role="alert">
          {run.error.message}
        </p>
      )}
    </dialog>
  );
}
