import { getSessions } from "@/app/_routes/runtime";
import { SessionsList } from "@/components/sessions/SessionsList";

export const dynamic = "force-dynamic";

export default function SessionsPage() {
  return (
    <>
      <h1>Sessions</h1>
      <p className="muted">
        The context requests belong to: what each working session did, its files and next steps. Record them with <code>reqwatch session</code> or the library;
        expired sessions are kept and shown as expired. Sessions received over OpenTelemetry (a Claude Code <code>session.id</code>, a GenAI conversation) are
        listed beside them, with their turns, model calls, tokens and cost.
      </p>
      <SessionsList initial={getSessions()} />
    </>
  );
}
