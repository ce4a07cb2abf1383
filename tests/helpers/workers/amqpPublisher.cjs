// A publisher: sends the messages given as JSON ([{ id, body }]) to a queue (through the default
// exchange), each with its messageId, writes "sent <id>" for each, and exits once its spans are exported.
const { amqplib, provider, url } = require("./amqpTelemetry.cjs");

const [queue, messages] = process.argv.slice(2);

(async () => {
  const connection = await amqplib.connect(url);
  const channel = await connection.createChannel();
  await channel.assertQueue(queue, { durable: false });
  for (const { id, body } of JSON.parse(messages)) {
    channel.sendToQueue(queue, Buffer.from(body), { messageId: id });
    process.stdout.write(`sent ${id}\n`);
  }
  await channel.close();
  await connection.close();
  await provider.shutdown();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
