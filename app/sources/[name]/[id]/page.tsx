import { notFound } from "next/navigation";
import { getRuntime } from "@/lib/dashboard/runtime";
import { AutoRefresh } from "@/components/AutoRefresh";
import { ReceivedLifecycle } from "@/components/sources/ReceivedLifecycle";
import { SourceRequest } from "@/components/sources/SourceRequest";
import { isReqwatchError } from "@/lib/model/errors";
import { sourceRequestView } from "@/lib/views/sourceRowsView";

export const dynamic = "force-dynamic";

/** How often a received lifecycle's page is rendered again: while it goes on, and once it ended. */
const RECEIVING_REFRESH_MS = 2000;
const ENDED_REFRESH_MS = 5000;

export default async function SourceRequestPage({ params }: { params: Promise<{ name: string; id: string }> }) {
  const { name, id } = await params;
  let view;
  let problem: string | null = null;
  try {
    view = sourceRequestView(getRuntime().sources.get(name), id);
  } catch (error) {
    if (!isReqwatchError(error)) throw error;
    // No such source: 404. A source that cannot be read now: the page says why, and its live query tries again.
    if (error.code === "NOT_FOUND") notFound();
    view = null;
    problem = error.message;
  }
  if (!view && !problem) notFound();
  if (view?.source.kind === "otel") {
    // Rendered here, and again while records may still come (a finished turn's late log events too).
    const goingOn = view.request.state !== "completed" && view.request.state !== "failed";
    return (
      <>
        <AutoRefresh everyMs={goingOn ? RECEIVING_REFRESH_MS : ENDED_REFRESH_MS} />
        <ReceivedLifecycle source={name} id={id} view={view} />
      </>
    );
  }
  return <SourceRequest source={name} id={id} initial={view} problem={problem} />;
}
