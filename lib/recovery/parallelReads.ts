import fs from "node:fs";
import path from "node:path";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import { readForIndex, type FileRead } from "./fileRead";
import type { RebuildWorkerData } from "./rebuildWorker";

/** Files per batch a reader hands over. */
const READ_BATCH = 250;
/** Below this many files, starting threads costs more than it saves. */
const MIN_FILES_FOR_THREADS = 2000;
/** A reader that has sent nothing for this long is given up on: its batches are read here. */
const STALL_MS = 15_000;

/** The reader thread's script: beside the bundle this runs from (dist/). Absent when the sources run directly (tests, `npm run dev`): then this thread reads. */
const workerFile = () => path.join(__dirname, "rebuildWorker.cjs");

interface Reader {
  batches: string[][];
  /** Batches received from it, in its order. */
  received: number;
  counters: Int32Array;
  channel: MessageChannel;
  worker: Worker;
}

/**
 * Read these request files for the index on `threads` reader threads while this thread consumes
 * them: `consume` gets each batch as it arrives (in no set order across threads). Synchronous (the
 * thread sleeps in Atomics.wait until a batch is there), so opening a tracker stays synchronous.
 * A reader that fails or stalls is stopped and its batches are read here: the result is the same.
 */
export function readInParallel(requestsDir: string, ids: readonly string[], threads: number, consume: (reads: FileRead[]) => void): { threads: number } {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += READ_BATCH) batches.push(ids.slice(i, i + READ_BATCH));
  const readHere = (batch: string[]) => consume(batch.map((id) => readForIndex(requestsDir, id, false)));
  if (threads < 1 || ids.length < MIN_FILES_FOR_THREADS || !fs.existsSync(workerFile())) {
    batches.forEach(readHere);
    return { threads: 0 };
  }
  const posted = new SharedArrayBuffer(4);
  const anyPosted = new Int32Array(posted);
  const readers: Reader[] = [];
  for (let k = 0; k < threads; k++) {
    const share = batches.filter((_, i) => i % threads === k);
    const counters = new SharedArrayBuffer(8);
    const channel = new MessageChannel();
    const workerData: RebuildWorkerData = { requestsDir, batches: share, port: channel.port2, counters, posted };
    readers.push({ batches: share, received: 0, counters: new Int32Array(counters), channel, worker: new Worker(workerFile(), { workerData, transferList: [channel.port2] }) });
  }
  const stop = (reader: Reader) => {
    void reader.worker.terminate();
    reader.channel.port1.close();
  };
  const left = new Set(readers.filter((reader) => reader.batches.length > 0));
  try {
    let heardAt = performance.now();
    while (left.size) {
      const seen = Atomics.load(anyPosted, 0);
      let heard = false;
      for (const reader of left) {
        const got = receiveMessageOnPort(reader.channel.port1);
        if (!got) continue;
        heard = true;
        const message = got.message as { reads: FileRead[] } | { error: string };
        if ("error" in message) {
          giveUp(reader);
          continue;
        }
        Atomics.add(reader.counters, 1, 1);
        Atomics.notify(reader.counters, 1);
        reader.received++;
        consume(message.reads);
        if (reader.received === reader.batches.length) left.delete(reader);
      }
      if (heard) {
        heardAt = performance.now();
      } else if (performance.now() - heardAt > STALL_MS) {
        for (const reader of left) giveUp(reader);
      } else {
        Atomics.wait(anyPosted, 0, seen, 1000);
      }
    }
  } finally {
    readers.forEach(stop);
  }
  return { threads };

  function giveUp(reader: Reader) {
    stop(reader);
    left.delete(reader);
    reader.batches.slice(reader.received).forEach(readHere);
  }
}
