import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { getActionToken, getFeedHub, getIndexing, getQueues, getReader, getSources } from "@/app/_routes/runtime";
import { SourceBadges } from "@/components/sources/SourcesTable";
import { LiveFeedProvider } from "@/components/data/LiveFeed";
import { LiveIndicator } from "@/components/header/LiveIndicator";
import { Notifier } from "@/components/header/Notifier";
import { IndexingBanner } from "@/components/header/IndexingBanner";
import { StuckBadge } from "@/components/header/StuckBadge";
import { PausedBadge } from "@/components/queues/Queues";
import "./globals.css";

// No title here: the stuck badge renders it, with the stuck count (components/header/StuckBadge.tsx).
export const metadata: Metadata = {
  description: "Request lifecycles of your agent gateways and workers, live.",
};

export const dynamic = "force-dynamic";

export default function RootLayout({ children }: { children: ReactNode }) {
  const reader = getReader();
  const { ownership, stateDir } = reader;
  // Read before the page's own data (a layout renders before its page): the stream replays from here.
  const feedSince = `${reader.generation()}:${reader.feedLastSeq()}`;
  const readOnly =
    ownership.access === "observed"
      ? `Observing ${stateDir.root} read-only: ${ownership.reason}. Every action is off. To allow actions, ${ownership.toWrite} and restart the dashboard.`
      : null;
  return (
    <html lang="en">
      <body>
        <LiveFeedProvider actionToken={getActionToken()} readOnly={readOnly} stateDir={stateDir.root} feedSince={feedSince}>
          <header className="site">
            <Link prefetch={false} className="brand" href="/">
              reqwatch
            </Link>
            <nav aria-label="Pages">
              <Link prefetch={false} href="/">
                Overview
              </Link>
              <Link prefetch={false} href="/requests">
                Requests
              </Link>
              <Link prefetch={false} href="/sessions">
                Sessions
              </Link>
              <Link prefetch={false} href="/usage">
                Usage
              </Link>
              <Link prefetch={false} href="/workers">
                Workers
              </Link>
              <Link prefetch={false} href="/audit">
                Audit
              </Link>
              <Link prefetch={false} href="/health">
                Health
              </Link>
            </nav>
            <StuckBadge initial={getFeedHub().stuckSnapshot} />
            <SourceBadges initial={getSources()} />
            <PausedBadge initial={getQueues()} />
            <LiveIndicator />
            <Notifier />
            {readOnly && (
              <span className="readonly" role="note" aria-label="Access" title={readOnly}>
                <strong>observing, read-only</strong> <span className="why">({ownership.reason.split(":")[0]})</span>
              </span>
            )}
            <span className="where" title="State directory">
              {stateDir.root}
            </span>
          </header>
          <IndexingBanner initial={getIndexing()} />
          <main>{children}</main>
        </LiveFeedProvider>
      </body>
    </html>
  );
}
