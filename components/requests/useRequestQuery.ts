"use client";

import { usePathname, useSearchParams } from "next/navigation";
import { useMemo, useState } from "react";
import { DEFAULT_QUERY, parseRequestQuery, requestQueryParams, type RequestQuery } from "@/lib/model/requestQuery";

function queryFrom(params: URLSearchParams): RequestQuery {
  try {
    return parseRequestQuery(params);
  } catch {
    return DEFAULT_QUERY;
  }
}

/** The requests table's filters and page, kept in the URL; `initialKey` is the query the server's view was made for. */
export function useRequestQuery(initialKey: string): { query: RequestQuery; go: (next: RequestQuery) => void } {
  const pathname = usePathname();
  const searchParams = useSearchParams();
  const urlQuery = useMemo(() => queryFrom(new URLSearchParams(searchParams.toString())), [searchParams]);
  // The view follows a click at once and the URL follows the view; a change of URL from outside
  // (back, forward, a link) resets the view (derived state, set during render as React advises).
  // The server's view at first: it may have left out what it could not show (a cursor of another sort, a source it does not read), and said so.
  const [query, setQuery] = useState(() => queryFrom(new URLSearchParams(initialKey)));
  const [seenUrlQuery, setSeenUrlQuery] = useState(urlQuery);
  if (urlQuery !== seenUrlQuery) {
    setSeenUrlQuery(urlQuery);
    setQuery(urlQuery);
  }
  const go = (next: RequestQuery) => {
    const params = requestQueryParams(next).toString();
    // The native History API: Next keeps useSearchParams in step without a server round trip,
    // so a filter change costs one fetch of the table's page, not a re-render of the whole route.
    setQuery(next);
    window.history.replaceState(null, "", params ? `${pathname}?${params}` : pathname);
  };
  return { query, go };
}
