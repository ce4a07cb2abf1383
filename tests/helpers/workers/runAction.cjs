// Runs one bulk action the way the dashboard's server does (default chunking), or one run of the
// monitor's retention (its paced steps), printing the audit entry's id when it starts; the test
// kills the process at some point during it.
const { openTrackerService: openTracker } = require("../../../dist/internal.cjs");

const [stateDir, kind] = process.argv.slice(2);
if (kind === "retention") {
  const tracker = openTracker({ stateDir, recover: false, retentionMs: 1 });
  process.stdout.write("started\n");
  tracker.runRetention().then((run) => process.stdout.write(`finished ${run.entryId}\n`));
} else {
  const tracker = openTracker({ stateDir, recover: false });
  const input = kind === "retry" ? { kind: "retry", filter: { states: ["failed"] } } : { kind: "cleanup", olderThanMs: 0 };
  tracker.actions
    .run(input, { onStart: (id) => process.stdout.write(`started ${id}\n`) })
    .then((entry) => process.stdout.write(`finished ${entry.id} ${entry.status}\n`));
}
