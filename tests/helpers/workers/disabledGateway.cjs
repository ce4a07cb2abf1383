// A gateway and a worker in one process with tracking off: the hot path on two trackers (and
// runWorker's), then what each call returned, as one JSON line. Tracking is off by
// REQWATCH_DISABLED, or by the option when the second argument is "option".
const { openTracker, runWorker } = require("../../../dist/index.cjs");

const [stateDir, how] = process.argv.slice(2);
const options = { stateDir, ...(how === "option" && { enabled: false }) };

async function main() {
  const gateway = openTracker(options);
  const request = gateway.create({ workspace: "gateway", chatId: 42, prompt: "hi", state: "queued" });
  gateway.transition(request.requestId, "processing");
  const done = gateway.transition(request.requestId, "completed", { fields: { output: "ok" }, reason: "exit 0" });
  const called = gateway.update(request.requestId, (current) => ({
    fields: { callback: { ...current.callback, success: true, attempts: 1, retryTimestamps: [] } },
  }));
  const session = gateway.sessions.recordCommand({ command: "npm test", status: "completed" });
  // runWorker opens its own tracker on stateDir (the variable turns it off); given one, it uses it.
  const worker = runWorker({ ...(how === "option" ? { tracker: gateway } : { stateDir }), stopWhenIdle: true, handler: () => ({ output: "never run" }) });
  const stats = await worker.done;
  const second = openTracker(options);
  const other = second.transition("made-by-another-process", "completed");
  gateway.close();
  second.close();
  process.stdout.write(`${JSON.stringify({ request, done, called, session, stats, other })}\n`);
}
main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
