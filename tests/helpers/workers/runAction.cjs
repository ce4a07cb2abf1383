// Runs one bulk action the way the dashboard's server does (default chunking), or one run of the
// monitor's retention (its paced steps), printing the audit entry's id when it starts; the test
// kills the process at some point during it.
const { openRoles } = require("../../../dist/internal.cjs");

const [stateDir, kind] = process.argv.slice(2);
if (kind === "retention") {
  const { operator } = openRoles({ stateDir, recover: false, retentionMs: 1 });
  process.stdout.write("started\n");
  operator.runRetention().then((run) => process.stdout.write(`finished ${run.entryId}\n`));
} else {
  const { operator } = openRoles({ stateDir, recover: false });
  const input = kind === "retry" ? { kind: "retry", filter: { states: ["failed"] } } : { kind: "cleanup", olderThanMs: 0 };
  operator.actions
    .run(input, { onStart: (id) => process.stdout.write(`started ${id}\n`) })
    .then((entry) => process.stdout.write(`finished ${entry.id} ${entry.status}\n`));
}
