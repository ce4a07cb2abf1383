import "server-only";
import type { AuditEntry } from "@/lib/db/auditLog";
import { getOperator } from "./runtime";

/**
 * Start an action and answer as soon as its audit entry exists; the action goes on in chunks and
 * the browser follows it at /api/actions/<id>. Rejects only if it could not start (bad input).
 */
export function startAction(run: (onStart: (id: number) => void) => Promise<AuditEntry>): Promise<AuditEntry> {
  return new Promise((resolve, reject) => {
    run((id) => resolve(getOperator().actions.entry(id))).then(resolve, reject);
  });
}
