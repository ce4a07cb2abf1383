import { notFound } from "next/navigation";
import { getRuntime } from "@/lib/dashboard/runtime";
import { SourceRequest } from "@/components/sources/SourceRequest";
import { isReqwatchError } from "@/lib/model/errors";
import { sourceRequestView } from "@/lib/views/sourceRowsView";

export const dynamic = "force-dynamic";

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
  return <SourceRequest source={name} id={id} initial={view} problem={problem} />;
}
