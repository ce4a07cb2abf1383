// A demo worker on reqwatch's worker helper: most requests complete, some fail and are retried
// with back-off, a few hang past their deadline, and now and then the whole process crashes
// mid-request (the monitor releases its request and another worker finishes it).
const { runWorker, PermanentError } = require("../../dist/index.cjs");

const [stateDir, workspace] = process.argv.slice(2);
const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

runWorker({
  stateDir,
  workspace,
  concurrency: 2,
  async handler(request, { signal }) {
    if (request.timeoutAt) {
      await sleep(60_000, signal); // hangs: the monitor times it out at its deadline
      return { fields: { output: "too late" } };
    }
    await sleep(300 + Math.random() * 2500, signal);
    const roll = Math.random();
    if (roll < 0.02) process.kill(process.pid, "SIGKILL"); // a crash mid-request
    if (roll < 0.12) throw new Error("upstream model returned 529 (overloaded)");
    if (roll < 0.15) throw new PermanentError("prompt rejected: context window exceeded (212k > 200k tokens)");
    return { fields: { output: `Done. ${request.prompt?.slice(0, 60) ?? ""}…`, tokens: 200 + Math.floor(Math.random() * 4000), exitCode: 0 } };
  },
  onError: (error) => console.error("demo worker:", error.message ?? error),
});
