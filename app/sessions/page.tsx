import { getTracker } from "@/app/_routes/runtime";
import { SessionsList } from "@/components/sessions/SessionsList";
import { sessionsView } from "@/lib/views/sessionsView";

export const dynamic = "force-dynamic";

export default function SessionsPage() {
  return (
    <>
      <h1>Sessions</h1>
      <p className="muted">
        The context requests belong to: what each working session did, its files and next steps. Record them with <code>reqwatch session</code> or the library; expired
        sessions are kept and shown as expired.
      </p>
      <SessionsList initial={sessionsView(getTracker())} />
    </>
  );
}
