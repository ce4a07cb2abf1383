// Adds one to a counter of the given requests, round robin, until `stopFile` exists; says how many
// updates it was told succeeded ("acked N" now and then), each failure's code, then "done <acks by id>".
const fs = require("node:fs");
const { openTracker } = require("../../../dist/index.cjs");

const [stateDir, stopFile, ...ids] = process.argv.slice(2);
const tracker = openTracker({ stateDir, recover: false });
const acked = Object.fromEntries(ids.map((id) => [id, 0]));
let total = 0;
for (let i = 0; !fs.existsSync(stopFile); i++) {
  const id = ids[i % ids.length];
  try {
    tracker.update(id, (current) => ({ fields: { counter: current.counter + 1 } }));
    acked[id]++;
    total++;
    if (total % 20 === 0) process.stdout.write(`acked ${total}\n`);
  } catch (error) {
    process.stdout.write(`failed ${error.code} ${String(error.cause?.code ?? "")} ${error.message.replace(/\n/g, " ")}\n`);
  }
}
tracker.close();
process.stdout.write(`done ${JSON.stringify(acked)}\n`);
