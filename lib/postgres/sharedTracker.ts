import { randomUUID } from "../process/crypto";
import { isReqwatchError, ReqwatchError } from "../model/errors";
import { assertRequestId, assertWorkspace } from "../model/ids";
import type { ListFilters } from "../model/listFilters";
import { redactField, redactRequestFields } from "../model/redaction";
import type { RequestRecord } from "../model/requestFormat";
import { validateFields } from "../model/requestInput";
import { applyChange, type Change } from "../model/transition";
import { completion, failure } from "../queue/deliveries";
import { creation, mustExist, updating } from "../queue/requestWrites";
import type { Changed, Decision, Skipped } from "../queue/changeEach";
import type {
  ChangeInput,
  Claim,
  ClaimOptions,
  CompleteResult,
  CreateInput,
  Delivery,
  FailOptions,
  RequestPage,
  ResolvedSharedTrackerOptions,
  SharedTracker,
  SharedTrackerOptions,
  State,
} from "../types";
import { checkSchema, migrate } from "./migrate";
import { loadPg, storeError, type PgPool, type PgPoolClient, type PgQueryable, type PgQueryResult } from "./pgDriver";
import { copyBatchIn, requestsAfter, type CopiedBatch } from "./copyBatch";
import { listRequests } from "./listRequests";
import { saveVersion } from "./saveVersion";
import { ResultWaits } from "./resultWaits";
import { resolveSharedOptions } from "./sharedOptions";
import { END_IF_SILENT, STALE_CLAIMS, takeBackChange, type StaleClaim, type WorkerResult } from "./staleClaims";

/**
 * Open the tracker on the shared store at `url` (postgres://user:password@host:port/database):
 * connect, bring the schema to this version (lib/postgres/migrate.ts), and return the tracker. Its
 * calls are the local tracker's, returning promises. The password never appears in an error.
 */
export function openSharedTracker(url: string, options: SharedTrackerOptions = {}): Promise<SharedTracker> {
  return openSharedStore(url, options);
}

/**
 * A person's actions on the shared store (lib/postgres/personActions.ts: retry, cancel), beside the
 * tracker's calls: what the CLI holds, not published.
 */
export interface SharedOperator {
  get(requestId: string): Promise<RequestRecord | null>;
  list(filters?: ListFilters): Promise<RequestPage>;
  /** One batch of a copy into this store, in one transaction (lib/postgres/copyBatch.ts). */
  copyBatch(records: readonly RequestRecord[]): Promise<CopiedBatch>;
  /** Up to `limit` whole requests after `afterId`, in id order: a copy out of this store. */
  requestsAfter(afterId: string, limit: number): Promise<RequestRecord[]>;
  /** Each request in a transaction of its own: `decide` reads it under its row lock and says what to change, or why not. */
  changeEach(ids: readonly string[], decide: (current: RequestRecord) => Decision, dryRun: boolean): Promise<{ changed: Changed[]; skipped: Skipped[] }>;
}

/** The shared store for reqwatch's own programs: the tracker's calls and the operator's. */
export async function openSharedStore(
  url: string,
  options: SharedTrackerOptions = {},
  access: "write" | "read" = "write",
): Promise<SharedTracker & SharedOperator> {
  if (typeof url !== "string" || url === "") throw new ReqwatchError("BAD_INPUT", "The shared store's address must be a postgres:// URL.");
  const resolved = resolveSharedOptions(options);
  const { Pool } = await loadPg();
  let pool: PgPool;
  try {
    // Read access: every transaction read-only on the server, so nothing can be written there by mistake.
    const readOnly = access === "read" ? { options: "-c default_transaction_read_only=on" } : {};
    pool = new Pool({ connectionString: url, max: resolved.poolSize, application_name: "reqwatch", ...readOnly });
  } catch (error) {
    throw storeError(url, "The shared store's address is not usable", error);
  }
  // An idle connection the server dropped: the pool makes a new one for the next call.
  pool.on("error", () => undefined);
  try {
    if (access === "read") await checkSchema(pool, url);
    else await migrate(pool, url);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw isReqwatchError(error) ? error : storeError(url, "Could not open the shared store", error);
  }
  return new PostgresTracker(pool, url, resolved);
}

class PostgresTracker implements SharedTracker, SharedOperator {
  readonly options: ResolvedSharedTrackerOptions;
  readonly #pool: PgPool;
  readonly #url: string;
  readonly #waits: ResultWaits;
  readonly #monitors = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(pool: PgPool, url: string, options: ResolvedSharedTrackerOptions) {
    this.#pool = pool;
    this.#url = url;
    this.options = options;
    this.#waits = new ResultWaits(pool, url);
  }

  async create(input: CreateInput): Promise<RequestRecord> {
    const { requestId, step } = creation(input, this.options.now);
    return this.#write(requestId, step);
  }

  transition(requestId: string, to: State, extra: Omit<Change, "to"> = {}): Promise<RequestRecord> {
    return this.update(requestId, { ...extra, to });
  }

  async update(requestId: string, change: ChangeInput): Promise<RequestRecord> {
    const { step } = updating(requestId, change, this.options.now);
    return this.#write(requestId, step);
  }

  list(filters: ListFilters = {}): Promise<RequestPage> {
    return this.#read((db) => listRequests(db, filters));
  }

  async get(requestId: string): Promise<RequestRecord | null> {
    assertRequestId(requestId);
    const { rows } = await this.#query<{ record: RequestRecord }>("SELECT record FROM requests WHERE request_id = $1", [requestId]);
    return rows[0]?.record ?? null;
  }

  async claimNext(options: ClaimOptions = {}): Promise<Claim | null> {
    if (options.workspace !== undefined) assertWorkspace(options.workspace);
    await this.takeBackStaleClaims();
    const by = options.worker ?? `pid ${process.pid}`;
    return this.#transaction(async (client) => {
      const now = this.options.now();
      const values: unknown[] = [now];
      if (options.workspace !== undefined) values.push(options.workspace);
      // The oldest ready request no other transaction holds: a locked row is passed, not waited on.
      const { rows } = await client.query<{ record: RequestRecord }>(
        `SELECT record FROM requests WHERE state = 'queued' AND (not_before IS NULL OR not_before <= $1) ${options.workspace !== undefined ? "AND workspace = $2" : ""}
          ORDER BY state_since, request_id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        values,
      );
      const current = rows[0]?.record;
      if (!current) return null;
      const token = randomUUID();
      const worker = { pid: process.pid, host: this.options.host };
      const claim = { token, ...worker, claimedAt: now, heartbeatAt: now };
      const next = applyChange(current, { to: "processing", reason: "claimed", by, managed: { claim }, note: { token, worker } }, now);
      const written = await this.#save(client, current, next);
      await client.query(
        "INSERT INTO claims (token, request_id, attempt, worker, host, pid, claimed_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
        [token, current.requestId, next.attempt ?? 1, by, this.options.host, process.pid, now],
      );
      return { request: written, token };
    });
  }

  async heartbeat(requestId: string, token: string): Promise<boolean> {
    assertRequestId(requestId);
    const { rowCount } = await this.#query("UPDATE claims SET heartbeat_at = $3 WHERE token = $1 AND request_id = $2 AND ended_at IS NULL", [
      token,
      requestId,
      this.options.now(),
    ]);
    return rowCount === 1;
  }

  async recordResult(requestId: string, token: string, result: WorkerResult): Promise<void> {
    assertRequestId(requestId);
    const redaction = this.options.redaction;
    const redacted: WorkerResult =
      result.outcome === "failed"
        ? { ...result, error: redactField(redaction, "error", result.error) }
        : result.fields
          ? { ...result, fields: redactRequestFields(redaction, validateFields(result.fields) ?? {}) }
          : result;
    // Kept only while the claim is live: a result under a lost claim would be dropped anyway.
    await this.#query("UPDATE claims SET result = $3 WHERE token = $1 AND request_id = $2 AND ended_at IS NULL", [token, requestId, redacted]);
  }

  async complete(requestId: string, token: string, result: CompleteResult = {}, by?: string): Promise<Delivery> {
    assertRequestId(requestId);
    return this.#deliver(requestId, (current) => completion(current, token, result, by, this.options.now()));
  }

  async fail(requestId: string, token: string, error: string, options: FailOptions = {}): Promise<Delivery> {
    assertRequestId(requestId);
    const recorded = redactField(this.options.redaction, "error", error);
    return this.#deliver(requestId, (current) => failure(current, token, error, recorded, options, this.options, this.options.now()));
  }

  async waitForResult(requestId: string, { timeoutMs }: { timeoutMs: number }): Promise<RequestRecord> {
    assertRequestId(requestId);
    return this.#waits.wait(requestId, timeoutMs);
  }

  copyBatch(records: readonly RequestRecord[]): Promise<CopiedBatch> {
    return this.#transaction((client) => copyBatchIn(client, this.options.redaction, records));
  }

  requestsAfter(afterId: string, limit: number): Promise<RequestRecord[]> {
    return this.#read((db) => requestsAfter(db, afterId, limit));
  }

  async changeEach(ids: readonly string[], decide: (current: RequestRecord) => Decision, dryRun: boolean): Promise<{ changed: Changed[]; skipped: Skipped[] }> {
    const changed: Changed[] = [];
    const skipped: Skipped[] = [];
    for (const requestId of ids) {
      assertRequestId(requestId);
      const outcome = await this.#transaction(async (client): Promise<{ changed: Changed } | { skipped: Skipped }> => {
        const current = await this.#locked(client, requestId);
        if (!current) return { skipped: { requestId, state: null, reason: "it does not exist" } };
        const decision = decide(current);
        if ("skip" in decision) return { skipped: { requestId, state: current.state, reason: decision.skip } };
        if (!dryRun) await this.#save(client, current, applyChange(current, decision.change, this.options.now()));
        return { changed: { requestId, from: current.state, reason: decision.reason } };
      });
      if ("changed" in outcome) changed.push(outcome.changed);
      else skipped.push(outcome.skipped);
    }
    return { changed, skipped };
  }

  async takeBackStaleClaims(): Promise<string[]> {
    const now = this.options.now();
    const silentSince = now - this.options.heartbeatTimeoutMs;
    const { rows } = await this.#query<StaleClaim>(STALE_CLAIMS, [silentSince]);
    const acted: string[] = [];
    for (const stale of rows) if (await this.#takeBack(stale, silentSince, now)) acted.push(stale.request_id);
    return acted;
  }

  startMonitor(options: { intervalMs?: number; onError?: (error: unknown) => void } = {}): { stop(): void } {
    const onError = options.onError ?? ((error: unknown) => console.error(error instanceof Error ? error.message : error));
    let running = false;
    const timer = setInterval(() => {
      if (running || this.#closed) return;
      running = true;
      this.takeBackStaleClaims()
        .catch(onError)
        .finally(() => (running = false));
    }, options.intervalMs ?? this.options.monitorIntervalMs);
    timer.unref();
    this.#monitors.add(timer);
    return {
      stop: () => {
        clearInterval(timer);
        this.#monitors.delete(timer);
      },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#monitors) clearInterval(timer);
    this.#monitors.clear();
    await this.#waits.close();
    await this.#pool.end();
  }

  /** A stale claim taken back, under the request's lock: its recorded result applied, else requeued (or timed out on its last attempt). */
  async #takeBack(stale: StaleClaim, silentSince: number, now: number): Promise<boolean> {
    return this.#transaction(async (client) => {
      // Another process's monitor holding the request is taking it back already.
      const { rows } = await client.query<{ record: RequestRecord }>("SELECT record FROM requests WHERE request_id = $1 FOR UPDATE SKIP LOCKED", [
        stale.request_id,
      ]);
      const current = rows[0]?.record;
      if (!current) return false;
      const underClaim = current.state === "processing" && current.claim?.token === stale.token;
      const next = underClaim ? takeBackChange(current, stale, now, this.options.maxAttempts) : current;
      // Still silent now that the request is locked: a beat since the list keeps the claim.
      const ended = await client.query(END_IF_SILENT, [stale.token, silentSince, now, next.state]);
      if (ended.rowCount !== 1 || !underClaim) return false;
      await this.#save(client, current, next);
      return true;
    });
  }

  async #deliver(requestId: string, decide: (current: RequestRecord) => Delivery): Promise<Delivery> {
    return this.#transaction(async (client) => {
      const current = mustExist(requestId, await this.#locked(client, requestId));
      const delivery = decide(current);
      if (delivery.request !== current) delivery.request = await this.#save(client, current, delivery.request);
      return delivery;
    });
  }

  /** One request's read-modify-write, under its row lock. */
  #write(requestId: string, decide: (current: RequestRecord | null) => RequestRecord): Promise<RequestRecord> {
    return this.#transaction(async (client) => {
      const current = await this.#locked(client, requestId);
      const next = decide(current);
      return next === current ? next : this.#save(client, current, next);
    });
  }

  async #locked(client: PgPoolClient, requestId: string): Promise<RequestRecord | null> {
    const { rows } = await client.query<{ record: RequestRecord }>("SELECT record FROM requests WHERE request_id = $1 FOR UPDATE", [requestId]);
    return rows[0]?.record ?? null;
  }

  #save(client: PgPoolClient, current: RequestRecord | null, next: RequestRecord): Promise<RequestRecord> {
    return saveVersion(client, this.options.redaction, current, next);
  }

  async #transaction<T>(work: (client: PgPoolClient) => Promise<T>): Promise<T> {
    this.#assertOpen();
    let client: PgPoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw storeError(this.#url, "Could not reach the shared store", error);
    }
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      client.release();
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      client.release();
      throw isReqwatchError(error) ? error : storeError(this.#url, "The shared store refused the write", error);
    }
  }

  /** A read (or a one-statement write) on any of the pool's connections; the driver's errors as ours. */
  async #read<T>(work: (db: PgQueryable) => Promise<T>): Promise<T> {
    this.#assertOpen();
    try {
      return await work(this.#pool);
    } catch (error) {
      throw isReqwatchError(error) ? error : storeError(this.#url, "The shared store's query failed", error);
    }
  }

  #query<Row>(text: string, values: unknown[]): Promise<PgQueryResult<Row>> {
    return this.#read((db) => db.query<Row>(text, values));
  }

  #assertOpen(): void {
    if (this.#closed) throw new ReqwatchError("BAD_INPUT", "The shared tracker is closed.");
  }
}
