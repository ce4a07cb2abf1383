import Link from "next/link";
import { getStuck, getTracker } from "@/app/_server/tracker";
import { RequestDetail } from "@/components/detail/RequestDetail";
import { isReqwatchError } from "@/lib/errors";
import { requestDetailView } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

export default async function RequestPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  let view;
  try {
    view = requestDetailView(getTracker(), id, getStuck());
  } catch (error) {
    if (!isReqwatchError(error, "BAD_INPUT")) throw error;
    view = null;
  }
  if (!view) {
    return (
      <>
        <h1>Request not found</h1>
        <p className="empty">
          There is no request <code>{id}</code> in this state directory. It may have been cleaned up: the <Link href="/audit">audit log</Link> lists cleanups, and
          each can be undone.
        </p>
      </>
    );
  }
  return <RequestDetail id={id} initial={view} />;
}
