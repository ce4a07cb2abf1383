import fs from "node:fs";
import path from "node:path";
import { writeFileDurable } from "../fs/durableWrite";
import { jsonObject, smallJsonValue } from "../fs/readSmallJson";
import { holderFile } from "../process/holderFile";
import { currentProcess } from "../process/liveness";
import type { ReceiverStatus } from "./otlpReceiver";
import { startTelemetry, telemetryStatus, type TelemetryHandle, type TelemetryOptions } from "./startTelemetry";
import { telemetryStoreFile } from "./store/schema";
import { ensureOwnFolder } from "./ownFolder";

export { ensureOwnFolder };

/** The lease: the dashboard process that runs the receiver and the agents' files' followers (lib/process/holderFile.ts). */
const RECEIVER_LEASE = "receiver.holder";
/** What the lease's holder says of its receiver (where it listens, or why not), for the dashboards that read beside it. */
const RECEIVER_STATUS = "receiver.json";
/** How often a dashboard that does not hold the lease looks whether its holder is gone. */
const LEASE_CHECK_MS = 1000;
/** How long a new dashboard waits for the holder to say where it listens before its start line says it has not. */
const HOLDER_SILENT_MS = 5000;
/** A holder whose receiver could not listen (its port taken: an earlier reqwatch, a collector) tries again after this, then twice as long each time, up to the most. */
const LISTEN_RETRY_FIRST_MS = 10_000;
const LISTEN_RETRY_MAX_MS = 5 * 60_000;

interface PublishedStatus extends ReceiverStatus {
  pid: number;
}

/** What a dashboard says of a holder that has not written where it listens (starting, or a reqwatch that does not write it). */
const silentHolder = (pid: number | null): ReceiverStatus => ({
  url: null,
  error: `another dashboard (pid ${pid ?? "?"}) holds the receiver and has not said where it listens`,
});

/**
 * The user's one receiver and one store, shared by every dashboard (`dir`: `telemetry` in the cache
 * folder, or REQWATCH_TELEMETRY_DIR). The first dashboard takes the lease and runs the receiver and
 * the agents' files' followers (startTelemetry); the others read the same store and look every
 * second whether the holder is gone (exited, or killed): the first to see it takes the lease, so the
 * receiver comes back on its port with no dashboard restarted.
 */
export class SharedTelemetry implements TelemetryHandle {
  readonly file: string;
  readonly ready: Promise<ReceiverStatus>;
  readonly #options: TelemetryOptions;
  readonly #dir: string;
  readonly #lease;
  #running: TelemetryHandle | null = null;
  #holder: number | null = null;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  #settle!: (status: ReceiverStatus) => void;
  readonly #waitingSince = Date.now();
  /** When the holder tries its port again (its receiver could not listen), and the wait after that. */
  #retryAt: number | null = null;
  #retryMs = LISTEN_RETRY_FIRST_MS;

  constructor(options: TelemetryOptions, dir: string) {
    this.#options = options;
    this.#dir = dir;
    ensureOwnFolder(dir);
    this.file = telemetryStoreFile(dir);
    this.#lease = holderFile(path.join(dir, RECEIVER_LEASE));
    this.ready = new Promise((resolve) => (this.#settle = resolve));
    this.#check();
    this.#timer = setInterval(() => this.#check(), LEASE_CHECK_MS);
    this.#timer.unref();
  }

  status(options: { unmappedOffset?: number } = {}) {
    if (this.#running) return { ...this.#running.status(options), receivedBy: { pid: process.pid, thisDashboard: true } };
    const published = this.#published();
    const receiver = published ? { url: published.url, error: published.error } : this.#holder ? silentHolder(this.#holder) : { url: null, error: "starting" };
    // The store, and which agents' folders are read, as the holder's settings are: this dashboard's say what it would read.
    return telemetryStatus(
      this.file,
      this.#options.settings,
      receiver,
      options.unmappedOffset,
      this.#holder ? { pid: this.#holder, thisDashboard: false } : null,
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    const running = this.#running;
    this.#running = null;
    if (running) {
      await running.close();
      fs.rmSync(path.join(this.#dir, RECEIVER_STATUS), { force: true });
      this.#lease.release();
    }
  }

  /** Take the lease when it is free or its holder gone; give up what runs here if another took it meanwhile. */
  #check(): void {
    if (this.#closed) return;
    let holding;
    try {
      holding = this.#lease.hold();
    } catch (error) {
      // Looked at again in a second: a full disk or a folder made unreadable may pass.
      console.error(`reqwatch: cannot read or take the receiver's lease in ${this.#dir}: ${(error as Error).message}`);
      return;
    }
    if (holding.held) {
      if (!this.#running) this.#run();
      else if (this.#retryAt !== null && Date.now() >= this.#retryAt) void this.#listenAgain(this.#running);
      return;
    }
    const holder = holding.holder?.pid ?? null;
    const changed = holder !== this.#holder;
    this.#holder = holder;
    const published = this.#published();
    if (this.#running) {
      // Two dashboards took a gone holder's lease at once; the one the file names keeps it.
      console.log(`reqwatch: another dashboard (pid ${holder ?? "?"}) took over receiving OpenTelemetry; this one reads what it keeps`);
      const running = this.#running;
      this.#running = null;
      this.#retryAt = null;
      void running.close();
    } else if (changed && holder !== null) {
      console.log(
        `reqwatch: OpenTelemetry is received by another dashboard (pid ${holder}${published?.url ? `, on ${published.url}` : ""}); this one shows what it keeps in ${this.file}`,
      );
    }
    if (published) this.#settle({ url: published.url, error: published.error });
    else if (Date.now() - this.#waitingSince > HOLDER_SILENT_MS) this.#settle(silentHolder(holder));
  }

  #run(): void {
    if (this.#holder !== null) console.log(`reqwatch: the dashboard that received OpenTelemetry (pid ${this.#holder}) is gone; this one receives now`);
    this.#holder = null;
    const running = startTelemetry({ ...this.#options, storeDir: this.#dir });
    this.#running = running;
    void running.ready.then((status) => {
      this.#settle(status);
      if (this.#running !== running) return;
      const port = this.#options.settings.port;
      if (status.error && port) {
        this.#retryAt = Date.now() + this.#retryMs;
        console.error(`reqwatch: trying port ${port} again in ${Math.round(this.#retryMs / 1000)} s`);
        this.#retryMs = Math.min(this.#retryMs * 2, LISTEN_RETRY_MAX_MS);
      } else this.#retryMs = LISTEN_RETRY_FIRST_MS;
      try {
        writeFileDurable(
          path.join(this.#dir, RECEIVER_STATUS),
          `${JSON.stringify({ pid: currentProcess().pid, url: status.url, error: status.error } satisfies PublishedStatus)}\n`,
          { fsync: false },
        );
      } catch (error) {
        console.error(`reqwatch: cannot write where the receiver listens (${RECEIVER_STATUS}) for the other dashboards: ${(error as Error).message}`);
      }
    });
  }

  /** Start what runs here again, for its receiver to try its port once more; the lease stays held meanwhile. */
  async #listenAgain(running: TelemetryHandle): Promise<void> {
    this.#retryAt = null;
    await running.close();
    if (this.#closed || this.#running !== running) return;
    this.#running = null;
    this.#run();
  }

  /** What the lease's holder said of its receiver; null when it has not (yet), or it is another's. */
  #published(): PublishedStatus | null {
    const holder = this.#holder;
    return smallJsonValue(path.join(this.#dir, RECEIVER_STATUS), {
      maxBytes: 4096,
      links: "refuse",
      shape: (json) => {
        const value = jsonObject(json);
        if (!value || value.pid !== holder || typeof value.pid !== "number") return undefined;
        return { pid: value.pid, url: typeof value.url === "string" ? value.url : null, error: typeof value.error === "string" ? value.error : null };
      },
    });
  }
}
