// A worker whose handler takes a while; SIGTERM should let the request in hand finish, then exit.
const { runWorker } = require("../../../dist/index.cjs");

const [stateDir, ms = "400"] = process.argv.slice(2);
const worker = runWorker({
  stateDir,
  pollIntervalMs: 20,
  handler: async (request) => {
    process.stdout.write(`started ${request.requestId}\n`);
    await new Promise((resolve) => setTimeout(resolve, Number(ms)));
    return { output: "finished after the signal" };
  },
});
worker.done.then((stats) => process.stdout.write(`stopped ${JSON.stringify(stats)}\n`));
