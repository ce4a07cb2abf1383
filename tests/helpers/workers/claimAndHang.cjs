// A worker that claims one request and then never reports nor heartbeats: the process stays alive
// until killed. With "mark", it first writes its result marker, as a worker that finished would.
const { openTracker } = require("../../../dist/index.cjs");

const [stateDir, mode = "hang"] = process.argv.slice(2);
const tracker = openTracker({ stateDir, recover: false });
const claim = tracker.claimNext({ worker: `hanging ${process.pid}` });
if (!claim) {
  console.error("nothing to claim");
  process.exit(3);
}
if (mode === "mark") tracker.recordResult(claim.request.requestId, claim.token, { outcome: "completed", fields: { output: "finished before the crash" } });
process.stdout.write(`${JSON.stringify({ requestId: claim.request.requestId, token: claim.token, pid: process.pid })}\n`);
setInterval(() => {}, 1 << 30);
