"use client";

import { useDashboard } from "./data/LiveFeed";
import { shellWord } from "@/lib/model/shellCommand";

/** What to do when the folder shown has no requests: the exact command for this folder, or, when it is observed, why nothing is offered. */
export function EmptyState() {
  const { readOnly, stateDir } = useDashboard();
  if (readOnly) {
    return (
      <div className="empty" role="status">
        <p>
          No requests yet in <code>{stateDir}</code>.
        </p>
        <p>reqwatch observes this folder read-only: requests appear here as the program that owns it writes them.</p>
      </div>
    );
  }
  return (
    <div className="empty" role="status">
      <p>
        No requests yet in <code>{stateDir}</code>.
      </p>
      <p>
        Record one into this folder with <code>npx reqwatch create --state-dir {shellWord(stateDir)} --workspace demo --state queued</code>, or point the
        dashboard at your gateway&apos;s state directory: <code>npm start -- --state-dir /path/to/state</code> (or set <code>REQWATCH_STATE_DIR</code>).
      </p>
      <p>
        To see reqwatch at work first, run <code>npm run demo</code>: a simulated gateway and workers on a temporary state directory.
      </p>
    </div>
  );
}
