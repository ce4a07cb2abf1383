// Writes to a state directory in a tight loop until killed. Used by the crash-consistency test.
const { openTracker } = require("../../../dist/index.cjs");

const [stateDir, seed] = process.argv.slice(2);
const tracker = openTracker({ stateDir, recover: false });
const ids = ["c0", "c1", "c2", "c3", "c4"];
for (const id of ids) {
  try {
    tracker.create({ requestId: id, workspace: "crash", counter: 0 });
  } catch (error) {
    if (error.code !== "ALREADY_EXISTS") throw error;
  }
}
let n = Number(seed);
for (let first = true; ; first = false) {
  n++;
  const id = ids[n % ids.length];
  // Outputs of varying size, so a torn write would show as a truncated file.
  tracker.update(id, (current) => ({ fields: { counter: (current.counter ?? 0) + 1, output: "o".repeat((n * 7919) % 20000) } }));
  // Said once a write is whole: a kill after it lands inside the loop, whatever the disk's pace.
  if (first) process.stdout.write("ready\n");
  if (n % 50 === 0) {
    try {
      tracker.create({ requestId: `extra-${seed}-${n}`, workspace: "crash", state: "queued" });
    } catch (error) {
      if (error.code !== "ALREADY_EXISTS") throw error;
    }
  }
}
