// A worker for one queue. A job's data says what its processor does: { fail: n } throws on its
// first n attempts ({ fail: "always" } on every one), { hold: true } takes the job and never
// finishes it while HOLD=1 (the worker is killed holding it; another worker then recovers it).
// Writes "holding <id>", "completed <id>", "failed <id> <reason>", "stalled <id>" as they happen;
// on SIGTERM closes and exports its last spans.
const { bullmq, provider, connection, telemetry } = require("./bullmqTelemetry.cjs");

const [queueName] = process.argv.slice(2);
const settings = { stalledInterval: Number(process.env.STALLED_INTERVAL ?? 30000), lockDuration: Number(process.env.LOCK_DURATION ?? 30000) };

const worker = new bullmq.Worker(
  queueName,
  async (job) => {
    if (job.data.hold && process.env.HOLD === "1") {
      process.stdout.write(`holding ${job.id}\n`);
      return new Promise(() => {});
    }
    if (job.data.fail === "always" || job.attemptsMade < (job.data.fail ?? 0)) throw new Error(`${job.name} refused on attempt ${job.attemptsMade + 1}`);
    return { done: job.name };
  },
  { connection, telemetry, ...settings },
);
worker.on("completed", (job) => process.stdout.write(`completed ${job.id}\n`));
worker.on("failed", (job, error) => process.stdout.write(`failed ${job.id} ${error.message}\n`));
worker.on("stalled", (id) => process.stdout.write(`stalled ${id}\n`));
worker.on("error", (error) => console.error(error));
worker.waitUntilReady().then(() => process.stdout.write("ready\n"));

process.on("SIGTERM", async () => {
  await worker.close();
  await provider.shutdown();
  process.exit(0);
});
