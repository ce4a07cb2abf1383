import Link from "next/link";
import { notFound } from "next/navigation";
import { getLastStuck, getTracker } from "@/app/_routes/runtime";
import { SessionDetail } from "@/components/sessions/SessionDetail";
import { isReqwatchError } from "@/lib/model/errors";
import { DEFAULT_QUERY } from "@/lib/model/requestQuery";
import { requestsView } from "@/lib/views/requestsView";
import { sessionDetailView } from "@/lib/views/sessionsView";

export const dynamic = "force-dynamic";

export default async function SessionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const tracker = getTracker();
  let view;
  let problem: string | null = null;
  try {
    view = sessionDetailView(tracker, id);
  } catch (error) {
    if (!isReqwatchError(error)) throw error;
    // An invalid id names no session (404); a session file that cannot be read is shown with its reason.
    if (error.code === "BAD_INPUT") notFound();
    view = null;
    problem = error.message;
  }
  if (!view && !problem) notFound();
  if (!view) {
    return (
      <>
        <h1>Session unreadable</h1>
        <p className="empty">
          {problem} <Link prefetch={false} href="/sessions">All sessions</Link>
        </p>
      </>
    );
  }
  const requests = requestsView(tracker, { ...DEFAULT_QUERY, session: id }, getLastStuck());
  return <SessionDetail id={id} initial={view} initialRequests={requests} />;
}
