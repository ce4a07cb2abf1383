// Adds one to a counter field of each of the given requests, round robin, `updates` times.
const { openTracker } = require("../../../dist/index.cjs");

const [stateDir, updates, ...ids] = process.argv.slice(2);
const tracker = openTracker({ stateDir, recover: false });
for (let i = 0; i < Number(updates); i++) {
  tracker.update(ids[i % ids.length], (current) => ({ fields: { counter: current.counter + 1 } }));
}
tracker.close();
