import Link from "next/link";
import { notFound } from "next/navigation";
import { getLastStuck, getReader, getReceivedSession, getTableView } from "@/app/_routes/runtime";
import { SessionDetail } from "@/components/sessions/SessionDetail";
import { ReceivedSessionDetail } from "@/components/sessions/ReceivedSessionDetail";
import { isReqwatchError } from "@/lib/model/errors";
import { DEFAULT_QUERY } from "@/lib/model/requestQuery";
import { requestsView } from "@/lib/views/requestsView";
import { sessionDetailView } from "@/lib/views/sessionsView";
import { parseSessionSource } from "@/lib/model/sessionSource";

export const dynamic = "force-dynamic";

export default async function SessionPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ source?: string | string[] }>;
}) {
  const { id } = await params;
  const { source } = await searchParams;
  if (typeof source === "string" && source !== "") return <ReceivedSessionPage id={id} source={source} />;
  const reader = getReader();
  let view;
  let problem: string | null = null;
  try {
    view = sessionDetailView(reader, id);
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
          {problem}{" "}
          <Link prefetch={false} href="/sessions">
            All sessions
          </Link>
        </p>
      </>
    );
  }
  const requests = requestsView(reader, { ...DEFAULT_QUERY, session: id }, getLastStuck());
  return <SessionDetail id={id} initial={view} initialRequests={requests} />;
}

/** A session received over OpenTelemetry: an unknown source, an id no session can have, or one nothing carries is a 404. */
function ReceivedSessionPage({ id, source }: { id: string; source: string }) {
  let view;
  try {
    parseSessionSource(source);
    view = getReceivedSession(id);
  } catch (error) {
    if (isReqwatchError(error) && (error.code === "BAD_INPUT" || error.code === "NOT_FOUND")) notFound();
    throw error;
  }
  const requests = getTableView({ ...DEFAULT_QUERY, source: "otel", session: id });
  return <ReceivedSessionDetail id={id} initial={view} initialRequests={requests} />;
}
