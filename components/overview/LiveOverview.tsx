"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { StateCounts as Counts } from "@/lib/db/queries/countByState";
import { DEFAULT_QUERY } from "@/lib/model/requestQuery";
import type { RequestsView } from "@/lib/views/requestsView";
import { usePollInterval } from "../data/LiveFeed";
import { countsOptions, requestListOptions } from "../data/queries";
import { EmptyState } from "../EmptyState";
import { RequestsTable } from "../requests/RequestsTable";
import { StateCounts } from "../StateCounts";

/** The count per state, kept current by the event stream. */
export function LiveStateCounts({ initial }: { initial: Counts }) {
  const pollMs = usePollInterval();
  const { data } = useQuery({ ...countsOptions(), initialData: initial, refetchInterval: pollMs });
  return <StateCounts counts={data} />;
}

/** The most recently updated requests, kept current by the event stream. */
export function LiveRecentRequests({ initial }: { initial: RequestsView }) {
  const pollMs = usePollInterval();
  const { data } = useQuery({ ...requestListOptions(DEFAULT_QUERY), initialData: initial, placeholderData: keepPreviousData, refetchInterval: pollMs });
  return data.items.length ? <RequestsTable rows={data.items} label="Recent requests" /> : <EmptyState />;
}
