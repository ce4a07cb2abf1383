export function EmptyState({ stateDir }: { stateDir: string }) {
  return (
    <div className="empty" role="status">
      <p>
        No requests yet in <code>{stateDir}</code>.
      </p>
      <p>
        Record one with <code>npx reqwatch create --workspace demo --state queued</code>, or point the dashboard at your
        gateway&apos;s state directory: <code>npm start -- --state-dir /path/to/state</code> (or set{" "}
        <code>REQWATCH_STATE_DIR</code>).
      </p>
      <p>
        To see reqwatch at work first, run <code>npm run demo</code>: a simulated gateway and workers on a temporary state directory.
      </p>
    </div>
  );
}
