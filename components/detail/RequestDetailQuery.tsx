"use client";

import { useQuery } from "@tanstack/react-query";
import { createContext, useContext, useMemo, type ReactNode } from "react";
import type { RequestDetailView } from "@/lib/views/requestsView";
import { usePollInterval } from "../data/LiveFeed";
import { requestDetailOptions } from "../data/queries";

interface RequestDetailState {
  data: RequestDetailView;
  error: Error | null;
}

const RequestDetailContext = createContext<RequestDetailState | null>(null);

/**
 * The one live query of a request's page, shared by its client leaves: the page's layout and
 * headings are server-rendered children, and the first data crosses to the browser once.
 */
export function RequestDetailQuery({ id, initial, children }: { id: string; initial: RequestDetailView; children: ReactNode }) {
  const pollMs = usePollInterval();
  const { data, error } = useQuery({ ...requestDetailOptions(id), initialData: initial, refetchInterval: pollMs });
  const state = useMemo(() => ({ data, error }), [data, error]);
  if (error && !data) return <p className="error-text">{error.message}</p>;
  return <RequestDetailContext.Provider value={state}>{children}</RequestDetailContext.Provider>;
}

/** The request's detail and the last refetch's error, as the page's query has them. */
export function useRequestDetail(): RequestDetailState {
  const state = useContext(RequestDetailContext);
  if (state === null) throw new Error("useRequestDetail needs <RequestDetailQuery>.");
  return state;
}
