import { notFound } from "next/navigation";
import { getLastStuck, getReader } from "@/app/_routes/runtime";
import { RequestDetail } from "@/components/detail/RequestDetail";
import { isReqwatchError } from "@/lib/model/errors";
import { requestDetailView } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

export default async function RequestPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  let view;
  try {
    view = requestDetailView(getReader(), id, getLastStuck());
  } catch (error) {
    if (!isReqwatchError(error, "BAD_INPUT")) throw error;
    view = null;
  }
  // 404, with not-found.tsx beside this page: an invalid id names no request either.
  if (!view) notFound();
  return <RequestDetail id={id} initial={view} />;
}
