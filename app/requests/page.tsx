import { getIndexing, getReader, getSources, getTableView, untilFirstBatch } from "@/app/_routes/runtime";
import { RequestsExplorer } from "@/components/requests/RequestsExplorer";
import { isReqwatchError } from "@/lib/model/errors";
import { DEFAULT_QUERY, parseRequestQuery, requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";

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
  // While a big folder's index fills: until the newest requests are in, so the first page is the final one.
  await untilFirstBatch();
  const reader = getReader();
  let view;
  try {
    view = getTableView(query);
  } catch (error) {
    if (!isReqwatchError(error)) throw error;
    if (query.source && !isReqwatchError(error, "BAD_INPUT") && !isReqwatchError(error, "NOT_FOUND")) {
      // A source that cannot be read now (locked, damaged, gone): the line over its table says why.
      view = { items: [], nextCursor: null };
    } else {
      // A cursor from another sort, or a source the dashboard does not read: show the first page (the folder's) and say why.
      problem = error.message;
      query = { ...query, cursor: undefined, ...(isReqwatchError(error, "NOT_FOUND") && { source: undefined }) };
      view = getTableView(query);
    }
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
        // Not while the index fills (its counts come at the end) or waits to try again: the folder has files.
        isEmpty={view.items.length === 0 && Object.values(reader.countsByState()).every((n) => n === 0) && !getIndexing()}
        initialSources={getSources()}
      />
    </>
  );
}
