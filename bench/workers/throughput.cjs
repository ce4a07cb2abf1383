// A bench worker: claim, heartbeat once, complete (with its result marker), until the queue is empty.
const { runWorker } = require("../../dist/index.cjs");

const [stateDir, claimDurability = "full"] = process.argv.slice(2);
process.env.REQWATCH_CLAIM_DURABILITY = claimDurability;
let first = null;
let last = null;
const worker = runWorker({
  stateDir,
  stopWhenIdle: true,
  handleSignals: false,
  handler: (request, context) => {
    first ??= performance.timeOrigin + performance.now();
    if (!context.heartbeat()) throw new Error("lost the claim");
    return { output: "ok" };
  },
  onError: (error) => {
    console.error(error);
    process.exitCode = 1;
  },
});
worker.done.then((stats) => {
  last = performance.timeOrigin + performance.now();
  process.stdout.write(`${JSON.stringify({ ...stats, first, last })}\n`);
});
