// A consumer of one queue: acks each message, except that a message whose body is "nack once" is
// nacked (requeued) on its first delivery. Writes "requeued <id>" and "acked <id>"; on SIGTERM closes
// and exports its last spans.
const { amqplib, provider, url } = require("./amqpTelemetry.cjs");

const [queue] = process.argv.slice(2);

let connection;
// Before consuming: messages already waiting are delivered at once.
process.on("SIGTERM", async () => {
  await connection?.close();
  await provider.shutdown();
  process.exit(0);
});

(async () => {
  connection = await amqplib.connect(url);
  const channel = await connection.createChannel();
  await channel.assertQueue(queue, { durable: false });
  await channel.consume(queue, (message) => {
    const id = message.properties.messageId;
    if (message.content.toString() === "nack once" && !message.fields.redelivered) {
      channel.nack(message, false, true);
      process.stdout.write(`requeued ${id}\n`);
    } else {
      channel.ack(message);
      process.stdout.write(`acked ${id}\n`);
    }
  });
  process.stdout.write("ready\n");
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
