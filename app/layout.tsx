import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { getActionToken, getFeedHub, getTracker } from "@/app/_server/tracker";
import { LiveFeedProvider } from "@/components/data/LiveFeed";
import { LiveIndicator } from "@/components/header/LiveIndicator";
import { StuckBadge } from "@/components/header/StuckBadge";
import "./globals.css";

export const metadata: Metadata = {
  title: "reqwatch",
  description: "Request lifecycles of your agent gateways and workers, live.",
};

export const dynamic = "force-dynamic";

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <LiveFeedProvider actionToken={getActionToken()}>
          <header className="site">
            <Link className="brand" href="/">
              reqwatch
            </Link>
            <nav aria-label="Pages">
              <Link href="/">Overview</Link>
              <Link href="/requests">Requests</Link>
              <Link href="/sessions">Sessions</Link>
              <Link href="/audit">Audit</Link>
              <Link href="/health">Health</Link>
            </nav>
            <StuckBadge initial={getFeedHub().stuckSnapshot} />
            <LiveIndicator />
            <span className="where" title="State directory">{getTracker().stateDir.root}</span>
          </header>
          <main>{children}</main>
        </LiveFeedProvider>
      </body>
    </html>
  );
}
