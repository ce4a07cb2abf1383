// A worker process: completes queued requests until none is ready, then prints its stats.
const { runWorker } = require("../../../dist/index.cjs");

const [stateDir, concurrency = "1"] = process.argv.slice(2);
let errors = 0;
const worker = runWorker({
  stateDir,
  concurrency: Number(concurrency),
  stopWhenIdle: true,
  name: `drain ${process.pid}`,
  handler: (request) => ({ output: `done by ${process.pid}`, fields: { handledBy: process.pid, runs: (request.runs ?? 0) + 1 } }),
  onError: (error) => {
    errors++;
    console.error(error);
  },
});
worker.done.then((stats) => {
  process.stdout.write(`${JSON.stringify({ ...stats, errors })}\n`);
  process.exitCode = errors ? 1 : 0;
});
