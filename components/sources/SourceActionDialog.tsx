"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef } from "react";
import type { SourceActionKind, SourceActionResult } from "@/lib/sources/sourceActions";
import { useDashboard } from "../data/LiveFeed";
import { auditKeys, postJson, requestKeys, sourceKeys } from "../data/queries";
import { plural } from "@/lib/model/plural";

const WORDS: Record<SourceActionKind, { verb: string; outcome: string }> = {
  retry: { verb: "Retry", outcome: "go back to pending, as claude-mem's own retry does" },
  delete: { verb: "Delete", outcome: "be deleted from a table claude-mem no longer reads" },
};

const post = (token: string, source: string, body: { kind: SourceActionKind; ids: string[]; dryRun: boolean }) =>
  postJson<SourceActionResult>(`/api/sources/${encodeURIComponent(source)}/actions`, token, body);

function Skipped({ result, would }: { result: SourceActionResult; would: boolean }) {
  return result.skipped.map((skip) => (
    <p key={skip.reason} className="muted">
      {skip.count} {would ? "would be " : ""}skipped: {skip.reason}
    </p>
  ));
}

/**
 * An action on another program's queue: the dry run (what would change, what would be skipped and
 * why, and the statement that does it), the confirmation, then the result, audited.
 */
export function SourceActionDialog({ source, kind, ids, onClose }: { source: string; kind: SourceActionKind; ids: string[]; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const { actionToken } = useDashboard();
  const queryClient = useQueryClient();
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const dryRun = useQuery({
    queryKey: [...sourceKeys.all, "dry run", source, kind, ids],
    queryFn: () => post(actionToken, source, { kind, ids, dryRun: true }),
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
  const run = useMutation({
    mutationFn: () => post(actionToken, source, { kind, ids, dryRun: false }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: requestKeys.lists() });
      void queryClient.invalidateQueries({ queryKey: sourceKeys.all });
      void queryClient.invalidateQueries({ queryKey: auditKeys.list() });
    },
  });
  const { verb, outcome } = WORDS[kind];
  const done = run.data;
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="source-action-title">
      <h2 id="source-action-title">
        {verb} {plural(ids.length, "message")} of {source}
      </h2>
      {dryRun.isPending && <p>Working out what this would change…</p>}
      {dryRun.error && (
        <p className="error-text" role="alert">
          {dryRun.error.message}
        </p>
      )}
      {dryRun.data && !done && (
        <section aria-label="Dry run">
          <p>
            <strong>Dry run:</strong> {dryRun.data.changed.length} of {dryRun.data.matched} would {outcome}.
          </p>
          {dryRun.data.changed.length > 0 && (
            <p className="muted">
              {dryRun.data.changed.slice(0, 10).join(", ")}
              {dryRun.data.changed.length > 10 ? ", …" : ""}
            </p>
          )}
          <Skipped result={dryRun.data} would />
          <p className="muted">
            One transaction on {dryRun.data.file}, each message read again and judged in it: <code>{dryRun.data.sql}</code>
          </p>
        </section>
      )}
      {done && (
        <section aria-label="Result" role="status">
          <p>
            <strong>Done:</strong> {done.changed.length} {kind === "retry" ? "retried" : "deleted"}, {done.skipped.reduce((n, skip) => n + skip.count, 0)}{" "}
            skipped.
          </p>
          <Skipped result={done} would={false} />
        </section>
      )}
      <div className="toolbar">
        <span className="spacer" />
        {!done && (
          <button
            type="button"
            className={kind === "delete" ? "danger" : "primary"}
            disabled={!dryRun.data || dryRun.data.changed.length === 0 || run.isPending}
            onClick={() => run.mutate()}
          >
            {verb} {dryRun.data?.changed.length ?? ""}
          </button>
        )}
        {done && (
          <Link prefetch={false} href="/audit">
            See the audit log
          </Link>
        )}
        <button type="button" onClick={() => ref.current?.close()}>
          {done ? "Close" : "Cancel"}
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
