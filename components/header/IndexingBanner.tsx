"use client";

import { useQuery } from "@tanstack/react-query";
import type { IndexingProgress } from "@/lib/store/context";
import { formatDuration } from "@/lib/model/duration";
import { usePollInterval } from "../data/LiveFeed";
import { indexingOptions } from "../data/queries";

/** While the folder is being indexed (a first open of a big folder): how far, and what that means for the figures shown. */
export function IndexingBanner({ initial }: { initial: IndexingProgress | null }) {
  const pollMs = usePollInterval();
  const { data } = useQuery({ ...indexingOptions(), initialData: initial, refetchInterval: pollMs });
  if (!data) return null;
  if (data.failure) {
    return (
      <div className="notice indexing" role="status" aria-label="Indexing">
        <strong>Indexing the folder failed:</strong> {data.failure.message}. It is tried again {formatDuration(data.failure.retryInMs)} after that failure, then
        at growing intervals until it succeeds. Tables show what is indexed so far; counts and charts are complete when it ends.
      </div>
    );
  }
  const listed = data.total > 0;
  return (
    <div className="notice indexing" role="status" aria-label="Indexing">
      <strong>Indexing the folder:</strong>{" "}
      {listed ? `${data.done.toLocaleString()} of ${data.total.toLocaleString()} request files, newest first.` : "listing the request files."}{" "}
      <progress max={Math.max(1, data.total)} value={data.done} aria-label="Indexed" /> Tables show what is indexed so far; counts and charts are complete when
      it ends.
    </div>
  );
}
