import type { AuditEntry } from "@/lib/db/auditLog";

/** An action's progress while it runs, then how many changed and how many were skipped, and why (what changed since the dry run among them). */
export function ActionResult({ entry }: { entry: AuditEntry }) {
  const done = entry.changed + entry.skipped;
  if (entry.status === "running") {
    return (
      <section aria-label="Progress">
        <p>
          Working: {done} of {entry.matched}
        </p>
        <progress className="progress" max={entry.matched || 1} value={done} aria-label="Progress" />
      </section>
    );
  }
  return (
    <section aria-label="Result" role="status">
      <p>
        <strong>{entry.status === "done" ? "Done" : "Stopped"}:</strong> {entry.changed} changed, {entry.skipped} skipped.
      </p>
      {entry.skipReasons.map((skip) => (
        <p key={skip.reason} className="muted">
          {skip.count} skipped: {skip.reason}
        </p>
      ))}
      {entry.error && <p className="error-text">{entry.error}</p>}
    </section>
  );
}
