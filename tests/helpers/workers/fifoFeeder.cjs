// Holds the writing end of a FIFO: each reader that opens it gets one line, then the end of the file.
// A reader that opens it blocking is then answered rather than frozen, so a test fails on what was
// read instead of hanging its whole run. Runs until killed.
const fs = require("node:fs");

const [fifo, line] = process.argv.slice(2);
const pause = new Int32Array(new SharedArrayBuffer(4));
process.stdout.write("ready\n");
for (;;) {
  // Blocks until a reader opens the FIFO.
  const fd = fs.openSync(fifo, "w");
  fs.writeSync(fd, `${line}\n`);
  fs.closeSync(fd);
  // While that reader holds the FIFO, an open for writing succeeds at once and would feed it again:
  // wait until it has closed (a non-blocking open then finds no reader).
  for (;;) {
    try {
      fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch (error) {
      if (error.code === "ENXIO") break;
      throw error;
    }
    Atomics.wait(pause, 0, 0, 5);
  }
}
