import { TimeoutError } from "../model/errors";
import type { RequestRecord } from "../model/requestFormat";
import { isTerminal, TERMINAL_STATES } from "../model/states";
import { loadPg, storeError, type PgClient, type PgPool } from "./pgDriver";

/** The channel every transition is announced on (`pg_notify` in the transaction that writes it). */
export const CHANGES_CHANNEL = "reqwatch_changes";

/** Between tries to listen again after the listening connection was lost. */
const RELISTEN_MS = 1000;

interface Waiter {
  /** The last transition of the request this waiter has seen: later ones are what it waits for. */
  after: number;
  resolve: (request: RequestRecord) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * Waits for requests to finish, on any host. One connection listens on the changes channel; each
 * notification (and each reconnection) makes it read the transitions past each waiter's position,
 * so a notification missed while the connection was down is caught up from the table.
 */
export class ResultWaits {
  readonly #pool: PgPool;
  readonly #url: string;
  readonly #waiting = new Map<string, Set<Waiter>>();
  #listener: Promise<PgClient> | null = null;
  #closed = false;
  #checking: Promise<void> | null = null;
  #checkAgain = false;

  constructor(pool: PgPool, url: string) {
    this.#pool = pool;
    this.#url = url;
  }

  get size(): number {
    let n = 0;
    for (const set of this.#waiting.values()) n += set.size;
    return n;
  }

  async wait(requestId: string, timeoutMs: number): Promise<RequestRecord> {
    // Listening before reading: a transition committed after the read is announced to us.
    await this.#listen();
    const { rows } = await this.#pool.query<{ record: RequestRecord; position: string | null }>(
      "SELECT r.record, (SELECT max(position) FROM transitions t WHERE t.request_id = r.request_id) AS position FROM requests r WHERE r.request_id = $1",
      [requestId],
    );
    const found = rows[0];
    if (found && isTerminal(found.record.state)) return found.record;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        after: Number(found?.position ?? 0),
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#remove(requestId, waiter);
          reject(new TimeoutError(`Request ${requestId} did not finish within ${timeoutMs} ms.`, { requestId, timeoutMs }));
        }, timeoutMs),
      };
      let set = this.#waiting.get(requestId);
      if (!set) this.#waiting.set(requestId, (set = new Set()));
      set.add(waiter);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const [requestId, set] of this.#waiting) {
      for (const waiter of set) {
        clearTimeout(waiter.timer);
        waiter.reject(new TimeoutError(`The tracker closed while waiting for request ${requestId}.`, { requestId }));
      }
    }
    this.#waiting.clear();
    const listener = this.#listener;
    this.#listener = null;
    if (listener) await listener.then((client) => client.end()).catch(() => undefined);
  }

  #listen(): Promise<PgClient> {
    this.#listener ??= this.#connect().catch((error: unknown) => {
      this.#listener = null;
      throw error;
    });
    return this.#listener;
  }

  async #connect(): Promise<PgClient> {
    const { Client } = await loadPg();
    const client = new Client({ connectionString: this.#url, application_name: "reqwatch listener" });
    let lost = false;
    // A lost connection (its "error" and its "end" both say so): listen again and read what was missed meanwhile.
    const onLost = () => {
      if (lost) return;
      lost = true;
      void client.end().catch(() => undefined);
      if (this.#closed) return;
      this.#listener = null;
      this.#relisten();
    };
    client.on("error", onLost);
    client.on("end", onLost);
    client.on("notification", () => void this.#check());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => undefined);
      throw storeError(this.#url, "Could not listen for changes in the shared store", error);
    }
    return client;
  }

  /** Listen again while anyone waits, trying each second until the server answers; then catch up from the table. */
  #relisten(): void {
    if (this.#closed || this.size === 0) return;
    this.#listen().then(
      () => this.#check(),
      () => setTimeout(() => this.#relisten(), RELISTEN_MS).unref(),
    );
  }

  /** Read the terminal transitions past each waiter's position; one read at a time, again if asked meanwhile. */
  async #check(): Promise<void> {
    if (this.#checking) {
      this.#checkAgain = true;
      return this.#checking;
    }
    this.#checking = (async () => {
      do {
        this.#checkAgain = false;
        await this.#resolveFinished().catch(() => undefined);
      } while (this.#checkAgain);
    })().finally(() => (this.#checking = null));
    return this.#checking;
  }

  async #resolveFinished(): Promise<void> {
    if (this.#waiting.size === 0 || this.#closed) return;
    const ids = [...this.#waiting.keys()];
    const floor = Math.min(...[...this.#waiting.values()].flatMap((set) => [...set].map((waiter) => waiter.after)));
    // Transitions of one request are written under its row lock, so its positions commit in order.
    const { rows } = await this.#pool.query<{ request_id: string; position: string; record: RequestRecord }>(
      `SELECT t.request_id, max(t.position) AS position, r.record FROM transitions t JOIN requests r USING (request_id)
        WHERE t.request_id = ANY($1) AND t.position > $2 AND t.to_state = ANY($3) AND t.from_state IS DISTINCT FROM t.to_state
        GROUP BY t.request_id, r.record`,
      [ids, floor, [...TERMINAL_STATES]],
    );
    for (const row of rows) {
      const set = this.#waiting.get(row.request_id);
      if (!set) continue;
      for (const waiter of set) {
        if (Number(row.position) <= waiter.after) continue;
        clearTimeout(waiter.timer);
        set.delete(waiter);
        waiter.resolve(row.record);
      }
      if (set.size === 0) this.#waiting.delete(row.request_id);
    }
  }

  #remove(requestId: string, waiter: Waiter): void {
    const set = this.#waiting.get(requestId);
    set?.delete(waiter);
    if (set?.size === 0) this.#waiting.delete(requestId);
  }
}
