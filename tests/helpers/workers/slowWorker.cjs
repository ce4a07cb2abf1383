// A worker whose handler holds its request until the process is told to stop: SIGTERM should let
// the request in hand finish, then exit, and claim nothing more, however late the signal comes.
const { runWorker } = require("../../../dist/index.cjs");

const [stateDir] = process.argv.slice(2);
const worker = runWorker({
  stateDir,
  pollIntervalMs: 20,
  handler: async (request) => {
    process.stdout.write(`started ${request.requestId}\n`);
    await new Promise((resolve) => process.once("SIGTERM", resolve));
    return { output: "finished after the signal" };
  },
});
worker.done.then((stats) => process.stdout.write(`stopped ${JSON.stringify(stats)}\n`));
