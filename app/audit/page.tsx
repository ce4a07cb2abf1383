import { getOperator } from "@/app/_routes/runtime";
import { AuditLog } from "@/components/audit/AuditLog";

export const dynamic = "force-dynamic";

export default function AuditPage() {
  return (
    <>
      <h1>Audit log</h1>
      <p className="muted">
        Every action taken from the dashboard or by a coding agent (retry, cancel, cleanup, undo), every run of the retention that removed something (by
        retention), and every pause and resume of a queue from anywhere: when, what, how many changed and why others were skipped. A cleanup can be undone here.
      </p>
      <AuditLog initial={getOperator().actions.list()} />
    </>
  );
}
