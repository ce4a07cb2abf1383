import fs from "node:fs";
import path from "node:path";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import { readBatch, type BatchResult, type ReadMode } from "./fileRead";
import type { RebuildWorkerData } from "./rebuildWorker";

/** Files per batch a reader hands over. */
const READ_BATCH = 250;
/** Below this many files, starting threads costs more than it saves. */
const MIN_FILES_FOR_THREADS = 2000;
/** A reader that has sent nothing for this long is given up on: its batches are read here. */
const STALL_MS = 15_000;

/** The reader thread's script: beside the bundle this runs from (dist/). Absent when the sources run directly (tests, `npm run dev`): then this thread reads. */
const workerFile = () => path.join(/*turbopackIgnore: true*/ __dirname, "rebuildWorker.cjs");

interface Reader {
  batches: string[][];
  /** Batches received from it, in its order. */
  received: number;
  counters: Int32Array;
  channel: MessageChannel;
  worker: Worker;
}

function batchesOf(ids: readonly string[]): string[][] {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += READ_BATCH) batches.push(ids.slice(i, i + READ_BATCH));
  return batches;
}

const threadsPay = (threads: number, files: number) => threads >= 1 && files >= MIN_FILES_FOR_THREADS && fs.existsSync(workerFile());

/** Start `threads` readers; batch i goes to reader i % threads, so the readers move through the list together. */
function startReaders(mode: ReadMode, requestsDir: string, batches: string[][], threads: number, posted: SharedArrayBuffer): Reader[] {
  return Array.from({ length: threads }, (_, k) => {
    const share = batches.filter((_, i) => i % threads === k);
    const counters = new SharedArrayBuffer(8);
    const channel = new MessageChannel();
    const workerData: RebuildWorkerData = { mode, requestsDir, batches: share, port: channel.port2, counters, posted };
    return {
      batches: share,
      received: 0,
      counters: new Int32Array(counters),
      channel,
      worker: new Worker(/*turbopackIgnore: true*/ workerFile(), { workerData, transferList: [channel.port2] }),
    };
  });
}

function stop(reader: Reader): void {
  void reader.worker.terminate();
  reader.channel.port1.close();
}

/** Tell the reader a batch was taken: it may read one more ahead. */
function taken(reader: Reader): void {
  reader.received++;
  Atomics.add(reader.counters, 1, 1);
  Atomics.notify(reader.counters, 1);
}

/**
 * Read these request files for the index on `threads` reader threads while this thread consumes
 * them: `consume` gets each batch as it arrives (in no set order across threads). "stat" mode gives
 * each file's modification time instead (-1: gone), to order a rebuild newest first. Synchronous
 * (the thread sleeps in Atomics.wait until a batch is there), so opening a tracker stays
 * synchronous. A reader that fails or stalls is stopped and its batches are read here: the result
 * is the same. `consume` returning false stops the reads there.
 */
export function readInParallel<M extends ReadMode>(
  mode: M,
  requestsDir: string,
  ids: readonly string[],
  threads: number,
  consume: (results: BatchResult<M>[]) => boolean | void,
): { threads: number } {
  const batches = batchesOf(ids);
  if (!threadsPay(threads, ids.length)) {
    for (const batch of batches) if (consume(readBatch(mode, requestsDir, batch)) === false) break;
    return { threads: 0 };
  }
  const posted = new SharedArrayBuffer(4);
  const anyPosted = new Int32Array(posted);
  const readers = startReaders(mode, requestsDir, batches, threads, posted);
  const left = new Set(readers.filter((reader) => reader.batches.length > 0));
  let stopped = false;
  const giveUp = (reader: Reader) => {
    stop(reader);
    left.delete(reader);
    for (const batch of reader.batches.slice(reader.received)) if (!stopped && consume(readBatch(mode, requestsDir, batch)) === false) stopped = true;
  };
  try {
    let heardAt = performance.now();
    while (left.size && !stopped) {
      const seen = Atomics.load(anyPosted, 0);
      let heard = false;
      for (const reader of left) {
        const got = receiveMessageOnPort(reader.channel.port1);
        if (!got) continue;
        heard = true;
        const message = got.message as { results: BatchResult<M>[] } | { error: string };
        if ("error" in message) {
          giveUp(reader);
          continue;
        }
        taken(reader);
        if (consume(message.results) === false) stopped = true;
        if (reader.received === reader.batches.length) left.delete(reader);
      }
      if (heard) heardAt = performance.now();
      else if (performance.now() - heardAt > STALL_MS) for (const reader of left) giveUp(reader);
      else Atomics.wait(anyPosted, 0, seen, 1000);
    }
  } finally {
    readers.forEach(stop);
  }
  return { threads };
}
