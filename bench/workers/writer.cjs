// A bench writer, as a gateway records its requests: create, processing, completed, with the
// event loop's turn between writes, for the given milliseconds; prints each write's time (ms).
const { openTracker } = require("../../dist/index.cjs");

const [stateDir, forMs, prefix] = process.argv.slice(2);
const tracker = openTracker({ stateDir, recover: false });
const samples = [];
const timed = (fn) => {
  const start = performance.now();
  fn();
  samples.push(performance.now() - start);
};
const turn = () => new Promise((resolve) => setImmediate(resolve));

(async () => {
  const until = performance.now() + Number(forMs);
  for (let i = 0; performance.now() < until; i++) {
    const requestId = `${prefix}-${i}`;
    timed(() => tracker.create({ requestId, workspace: "gateway", state: "processing", prompt: "hello" }));
    await turn();
    timed(() => tracker.transition(requestId, "completed", { fields: { output: "done" } }));
    await turn();
  }
  tracker.close();
  process.stdout.write(`${JSON.stringify(samples)}\n`);
})();
