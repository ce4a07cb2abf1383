// A producer: adds the jobs given as JSON ([{ name, data, opts }]) to a queue, writes "added <name>
// <id>" for each, and exits once its spans are exported.
const { bullmq, provider, connection, telemetry } = require("./bullmqTelemetry.cjs");

const [queueName, jobs] = process.argv.slice(2);

(async () => {
  const queue = new bullmq.Queue(queueName, { connection, telemetry });
  for (const { name, data, opts } of JSON.parse(jobs)) {
    const job = await queue.add(name, data, opts);
    process.stdout.write(`added ${name} ${job.id}\n`);
  }
  await queue.close();
  await provider.shutdown();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
