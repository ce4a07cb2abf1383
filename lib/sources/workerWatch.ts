import { WorkerSpellStore } from "../spells/spellStore";
import { workerUrl, type WorkerAddress } from "./workerAddress";
import { workerStatus, type WorkerStatus } from "./workerClient";
import { WorkerEventStream } from "./workerEventStream";

/** A look this often, and at once when the stream says the queue changed. */
const LOOK_MS = 1000;

/**
 * Follows one worker while the dashboard runs: its event stream for changes as they happen, a look
 * every second besides (the stream may be down, or miss what happened while reconnecting), each
 * look written to the spell store. Reads only: GET requests to 127.0.0.1.
 */
export class ClaudeMemWorkerWatch {
  readonly store: WorkerSpellStore;
  #status_: WorkerStatus;
  #timer: NodeJS.Timeout | null = null;
  #stream: WorkerEventStream | null = null;
  #looking: Promise<void> | null = null;
  #again = false;
  #closed = false;

  constructor(
    readonly address: WorkerAddress,
    storeFile: string,
  ) {
    this.store = new WorkerSpellStore(storeFile);
    this.#status_ = { url: workerUrl(address), settings: address.settings, running: false, silent: false, error: null, snapshot: null, seenAt: null };
  }

  start(): void {
    if (this.#timer || this.#closed) return;
    this.store.trim();
    void this.look();
    this.#timer = setInterval(() => void this.look(), LOOK_MS);
    this.#timer.unref();
  }

  status(): WorkerStatus {
    return this.#status_;
  }

  /** One look now (or right after the one under way). Resolves when it is written. */
  look(): Promise<void> {
    if (this.#looking) {
      this.#again = true;
      return this.#looking;
    }
    this.#looking = (async () => {
      do {
        this.#again = false;
        await this.#lookOnce();
      } while (this.#again && !this.#closed);
    })().finally(() => (this.#looking = null));
    return this.#looking;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#stream?.close();
    await this.#looking?.catch(() => {});
    this.store.close();
  }

  async #lookOnce(): Promise<void> {
    const status = await workerStatus(this.address, this.#status_.seenAt);
    this.#status_ = status;
    if (status.snapshot && !this.#stream?.following) {
      this.#stream = new WorkerEventStream(`${status.url}/stream`, { queued: () => this.store.arrived(), changed: () => void this.look() });
    }
    // No answer in time is not a stop: on a busy machine the worker answers again, its queue intact.
    if (this.#closed || status.silent) return;
    try {
      this.store.observe(status.snapshot ? { snapshot: status.snapshot } : { down: status.error ?? "not running" });
    } catch (error) {
      this.#status_ = { ...status, error: `reqwatch cannot keep what it saw: ${(error as Error).message}` };
    }
  }
}
