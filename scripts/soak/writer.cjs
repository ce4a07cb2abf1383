// One writer process of the soak: `rate` state writes per second for `seconds`, each request going
// queued -> processing -> completed (three writes). Prints one JSON line at the end.
const { openTracker } = require("../../dist/index.cjs");

const [stateDir, rateText, secondsText, prefix] = process.argv.slice(2);
const rate = Number(rateText);
const seconds = Number(secondsText);
const tracker = openTracker({ stateDir, recover: false });
let writes = 0;
let errors = 0;
const firstErrors = [];
let n = 0;
let step = 0;
const started = performance.now();

function writeOne() {
  const id = `${prefix}-${n}`;
  try {
    if (step === 0) tracker.create({ requestId: id, workspace: "soak", state: "queued", prompt: `soak request ${n}`, model: "sonnet" });
    else if (step === 1) tracker.transition(id, "processing");
    else tracker.transition(id, "completed", { fields: { output: `answer ${n}`, tokens: 100 + (n % 900) } });
    writes++;
  } catch (error) {
    errors++;
    if (firstErrors.length < 5) firstErrors.push(String(error.message));
  }
  if (++step === 3) [step, n] = [0, n + 1];
}

function tick() {
  const elapsed = (performance.now() - started) / 1000;
  if (elapsed >= seconds) {
    tracker.close();
    process.stdout.write(`${JSON.stringify({ writes, errors, firstErrors, seconds: elapsed })}\n`);
    return;
  }
  // Paced by the clock: catch up to `rate` per second, then give the event loop a turn.
  const due = Math.floor(elapsed * rate);
  while (writes + errors < due && performance.now() - started < seconds * 1000) writeOne();
  setTimeout(tick, 2);
}
tick();
