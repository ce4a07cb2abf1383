import { DEFAULT_QUERY, requestQueryParams } from "@/lib/model/requestQuery";

// Not in a client module: a server component (a received lifecycle's page) calls them too, and a client module's functions cannot be called on the server.

/** A source's row's own page. */
export function sourceRowPath(source: string, requestId: string): string {
  return `/sources/${encodeURIComponent(source)}/${encodeURIComponent(requestId)}`;
}

/** The requests page for a source, with more filters if given. */
export function sourceTablePath(source: string, stuck = false): string {
  return `/requests?${requestQueryParams({ ...DEFAULT_QUERY, source, stuck })}`;
}
