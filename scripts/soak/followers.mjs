// The soak's event-stream clients, in a process of their own: parsing every change for 20 streams
// is real work, and on the API clients' event loop it would have been counted as API latency.
// Prints `ready` once every stream has had its `ready` event; on a `stop` line on stdin, closes
// the streams and prints one JSON line: each client's count, gaps and order.
import readline from "node:readline";
import { readEvents } from "../lib/readEvents.mjs";
const [url, countText] = process.argv.slice(2);

/** One event-stream client: checks that `changes` arrive in order with no gap, from its `ready` on. */
async function follow(signal, onReady) {
  const client = { startSeq: null, lastSeq: null, received: 0, gaps: 0, outOfOrder: 0, resets: 0, errors: 0 };
  try {
    const response = await fetch(`${url}/api/events`, { headers: { Accept: "text/event-stream" }, signal });
    if (!response.ok) throw new Error(`status ${response.status}`);
    await readEvents(response.body, (events) => {
      for (const event of events) {
        if (event.event === "ready") {
          client.startSeq = client.lastSeq = event.data.seq;
          onReady();
        } else if (event.event === "reset") client.resets++;
        else if (event.event === "changes") {
          for (const change of event.data.changes) {
            if (change.seq <= client.lastSeq) client.outOfOrder++;
            else if (change.seq > client.lastSeq + 1) client.gaps += change.seq - client.lastSeq - 1;
            client.lastSeq = Math.max(client.lastSeq, change.seq);
            client.received++;
          }
        }
      }
    });
  } catch {
    if (!signal.aborted) client.errors++;
  }
  return client;
}

const abort = new AbortController();
const count = Number(countText);
let ready = 0;
const clients = Array.from({ length: count }, () => follow(abort.signal, () => ++ready === count && process.stdout.write("ready\n")));
if (count === 0) process.stdout.write("ready\n");
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line.trim() === "stop") break;
}
abort.abort();
process.stdout.write(`${JSON.stringify(await Promise.all(clients))}\n`);
