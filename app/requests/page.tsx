import { getLastStuck, getTracker } from "@/app/_routes/runtime";
import { RequestsExplorer } from "@/components/requests/RequestsExplorer";
import { isReqwatchError } from "@/lib/model/errors";
import { DEFAULT_QUERY, parseRequestQuery, requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";
import { requestsView } from "@/lib/views/requestsView";

export const dynamic = "force-dynamic";

export default async function RequestsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const raw = await searchParams;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(raw)) if (typeof value === "string") params.set(key, value);
  let query: RequestQuery = DEFAULT_QUERY;
  let problem: string | null = null;
  try {
    query = parseRequestQuery(params);
  } catch (error) {
    if (!isReqwatchError(error)) throw error;
    problem = error.message;
  }
  const tracker = getTracker();
  let view;
  try {
    view = requestsView(tracker, query, getLastStuck());
  } catch (error) {
    // A cursor from another sort, say: show the first page and say why.
    if (!isReqwatchError(error, "BAD_INPUT")) throw error;
    problem = error.message;
    query = { ...query, cursor: undefined };
    view = requestsView(tracker, query, getLastStuck());
  }
  return (
    <>
      <h1>Requests</h1>
      {problem && (
        <p className="notice" role="alert">
          {problem} Showing the view without it.
        </p>
      )}
      <RequestsExplorer
        initialKey={requestQueryParams(query).toString()}
        initialView={view}
        isEmpty={view.items.length === 0 && Object.values(tracker.countsByState()).every((n) => n === 0)}
      />
    </>
  );
}
