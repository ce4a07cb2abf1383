// runSharedWorker in a process of its own, as on some host: what each request's prompt says it does.
// "hang-once" hangs on its first attempt (neither beats past the kill nor reports), "fail-once" fails
// its first attempt retryably, "permanent" fails for good; anything else completes. Each request it
// starts is a line on stdout; at its end, its stats. argv: url host [idle] (stop once nothing is ready).
const { openSharedTracker, runSharedWorker, PermanentError } = require("../../../dist/index.cjs");

const [url, host, mode] = process.argv.slice(2);

async function main() {
  const tracker = await openSharedTracker(url, { host, backoff: { baseMs: 0, jitter: 0 } });
  const worker = runSharedWorker({
    tracker,
    name: `${host} ${process.pid}`,
    stopWhenIdle: mode === "idle",
    pollIntervalMs: 50,
    handler: async (request, { token }) => {
      const attempt = request.attempt ?? 1;
      process.stdout.write(`${JSON.stringify({ started: request.requestId, token, attempt, pid: process.pid })}\n`);
      if (request.prompt === "hang-once" && attempt === 1) await new Promise(() => setInterval(() => {}, 1 << 30));
      if (request.prompt === "fail-once" && attempt === 1) throw new Error("the first attempt fails");
      if (request.prompt === "permanent") throw new PermanentError("this request cannot succeed");
      return { output: `done on ${host}` };
    },
  });
  const stats = await worker.done;
  await tracker.close();
  process.stdout.write(`${JSON.stringify({ host, stats })}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
