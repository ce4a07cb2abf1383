// A worker on the shared store, as a process on some host: "drain" says "ready" once open, starts
// at the first line on its stdin (so that workers started together drain together), claims and
// completes queued requests until none is ready, then prints what it did; "hang" claims one, prints
// its claim, and neither beats nor reports until it is killed.
const { openSharedTracker } = require("../../../dist/index.cjs");

const [url, host, mode = "drain"] = process.argv.slice(2);

async function main() {
  const tracker = await openSharedTracker(url, { host });
  const worker = `${mode} ${host} ${process.pid}`;
  if (mode === "hang") {
    const claim = await tracker.claimNext({ worker });
    if (!claim) throw new Error("nothing to claim");
    process.stdout.write(`${JSON.stringify({ requestId: claim.request.requestId, token: claim.token, pid: process.pid })}\n`);
    setInterval(() => {}, 1 << 30);
    return;
  }
  process.stdout.write("ready\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.destroy();
  const completed = [];
  for (;;) {
    const claim = await tracker.claimNext({ worker });
    if (!claim) break;
    const id = claim.request.requestId;
    if (!(await tracker.heartbeat(id, claim.token))) throw new Error(`lost the claim of ${id}`);
    const delivery = await tracker.complete(id, claim.token, { output: `done on ${host}` });
    if (delivery.outcome !== "applied") throw new Error(`${id}: ${delivery.outcome} ${delivery.reason}`);
    completed.push(id);
  }
  await tracker.close();
  process.stdout.write(`${JSON.stringify({ host, completed })}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
