import { randomUUID } from "../process/crypto";
import { activeTraceparent } from "../process/activeTrace";
import { decodeCursor, encodeCursor } from "../model/cursor";
import { formatDuration } from "../model/duration";
import { ReqwatchError } from "../model/errors";
import { assertRequestId, assertWorkspace } from "../model/ids";
import { resolveListFilters, type ListFilters } from "../model/listFilters";
import { redactField, redactRequest, redactRequestFields } from "../model/redaction";
import type { RequestRecord } from "../model/requestFormat";
import { validateChange, validateFields } from "../model/requestInput";
import { applyChange, changesNothing, newRequest, stateEnteredAt, type Change } from "../model/transition";
import { completion, failure } from "../queue/deliveries";
import type {
  ChangeInput,
  Claim,
  ClaimOptions,
  CompleteResult,
  CreateInput,
  Delivery,
  FailOptions,
  RequestPage,
  RequestSummary,
  ResolvedSharedTrackerOptions,
  SharedTracker,
  SharedTrackerOptions,
  State,
} from "../types";
import { migrate } from "./migrate";
import { loadPg, storeError, type PgPool, type PgPoolClient } from "./pgDriver";
import { CHANGES_CHANNEL, ResultWaits } from "./resultWaits";
import { resolveSharedOptions } from "./sharedOptions";

type WorkerResult = Parameters<SharedTracker["recordResult"]>[2];

interface StaleClaim {
  token: string;
  request_id: string;
  worker: string;
  host: string;
  heartbeat_at: string;
  result: WorkerResult | null;
}

/**
 * Open the tracker on the shared store at `url` (postgres://user:password@host:port/database):
 * connect, bring the schema to this version (lib/shared/migrate.ts), and return the tracker. Its
 * calls are the local tracker's, returning promises. The password never appears in an error.
 */
export async function openSharedTracker(url: string, options: SharedTrackerOptions = {}): Promise<SharedTracker> {
  if (typeof url !== "string" || url === "") throw new ReqwatchError("BAD_INPUT", "The shared store's address must be a postgres:// URL.");
  const resolved = resolveSharedOptions(options);
  const { Pool } = await loadPg();
  let pool: PgPool;
  try {
    pool = new Pool({ connectionString: url, max: resolved.poolSize, application_name: "reqwatch" });
  } catch (error) {
    throw storeError(url, "The shared store's address is not usable", error);
  }
  // An idle connection the server dropped: the pool makes a new one for the next call.
  pool.on("error", () => undefined);
  try {
    await migrate(pool, url);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error instanceof ReqwatchError ? error : storeError(url, "Could not open the shared store", error);
  }
  return new PostgresTracker(pool, url, resolved);
}

function mustExist(requestId: string, current: RequestRecord | null): RequestRecord {
  if (!current) throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
  return current;
}

function summaryOf(record: RequestRecord): RequestSummary {
  return {
    requestId: record.requestId,
    workspace: record.workspace,
    sessionId: record.sessionId ?? null,
    chatId: record.chatId ?? null,
    state: record.state,
    previousState: record.previousState ?? null,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    stateSince: stateEnteredAt(record),
    attempt: record.attempt ?? null,
    model: record.model ?? null,
    tokens: record.tokens ?? null,
    version: record.version ?? 0,
  };
}

/** Filters the local list has that this store does not yet. */
const NOT_YET = ["text", "workspacePrefix", "sessionPrefix", "callbackFailed"] as const;

class PostgresTracker implements SharedTracker {
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
    const { requestId = randomUUID(), workspace, ...rest } = input;
    assertRequestId(requestId);
    assertWorkspace(workspace);
    const { state, reason, by, ...given } = rest;
    const traceparent = given.traceparent ?? activeTraceparent() ?? undefined;
    const validated = validateFields({ ...given, ...(traceparent !== undefined && { traceparent }) }) ?? {};
    return this.#write(requestId, (current) => {
      if (current) throw new ReqwatchError("ALREADY_EXISTS", `Request ${requestId} already exists.`);
      return newRequest({ ...validated, requestId, workspace, state, reason, by }, this.options.now());
    });
  }

  transition(requestId: string, to: State, extra: Omit<Change, "to"> = {}): Promise<RequestRecord> {
    return this.update(requestId, { ...extra, to });
  }

  async update(requestId: string, change: ChangeInput): Promise<RequestRecord> {
    assertRequestId(requestId);
    const fixed = typeof change === "function" ? null : validateChange(change);
    return this.#write(requestId, (found) => {
      const request = mustExist(requestId, found);
      const next = fixed ?? validateChange((change as (current: RequestRecord) => Change)(request));
      return changesNothing(request, next) ? request : applyChange(request, next, this.options.now());
    });
  }

  async get(requestId: string): Promise<RequestRecord | null> {
    assertRequestId(requestId);
    const { rows } = await this.#query<{ record: RequestRecord }>("SELECT record FROM requests WHERE request_id = $1", [requestId]);
    return rows[0]?.record ?? null;
  }

  async list(filters: ListFilters = {}): Promise<RequestPage> {
    const f = resolveListFilters(filters);
    for (const key of NOT_YET) {
      if (f[key] !== undefined) throw new ReqwatchError("BAD_INPUT", `The shared store does not filter by "${key}" yet.`);
    }
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown) => `$${values.push(value)}`;
    if (f.workspace !== undefined) where.push(`workspace = ${param(f.workspace)}`);
    if (f.states?.length) where.push(`state = ANY(${param(f.states)})`);
    if (f.sessionId !== undefined) where.push(`record->>'sessionId' = ${param(f.sessionId)}`);
    if (f.ids) where.push(`request_id = ANY(${param(f.ids)})`);
    if (f.createdFrom !== undefined) where.push(`created_at >= ${param(f.createdFrom)}`);
    if (f.createdTo !== undefined) where.push(`created_at <= ${param(f.createdTo)}`);
    if (f.updatedFrom !== undefined) where.push(`last_updated_at >= ${param(f.updatedFrom)}`);
    if (f.updatedTo !== undefined) where.push(`last_updated_at <= ${param(f.updatedTo)}`);
    const column = f.sort === "createdAt" ? "created_at" : "last_updated_at";
    const direction = f.order === "asc" ? "ASC" : "DESC";
    if (f.cursor !== undefined) {
      const after = decodeCursor(f.cursor, f.sort, f.order);
      where.push(`(${column}, request_id) ${f.order === "asc" ? ">" : "<"} (${param(after.value)}, ${param(after.id)})`);
    }
    const { rows } = await this.#query<{ record: RequestRecord }>(
      `SELECT record FROM requests ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${column} ${direction}, request_id ${direction} LIMIT ${param(f.limit + 1)}`,
      values,
    );
    const items = rows.slice(0, f.limit).map((row) => summaryOf(row.record));
    const last = items.at(-1);
    const more = rows.length > f.limit && last !== undefined;
    const value = last && (f.sort === "createdAt" ? last.createdAt : last.lastUpdatedAt);
    return { items, nextCursor: more ? encodeCursor({ s: f.sort, o: f.order, v: value!, id: last.requestId }) : null };
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

  async takeBackStaleClaims(): Promise<string[]> {
    const now = this.options.now();
    const { rows } = await this.#query<StaleClaim>(
      "SELECT token, request_id, worker, host, heartbeat_at, result FROM claims WHERE ended_at IS NULL AND heartbeat_at < $1 ORDER BY heartbeat_at",
      [now - this.options.heartbeatTimeoutMs],
    );
    const acted: string[] = [];
    for (const stale of rows) if (await this.#takeBack(stale, now)) acted.push(stale.request_id);
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
  async #takeBack(stale: StaleClaim, now: number): Promise<boolean> {
    return this.#transaction(async (client) => {
      // Another process's monitor holding it is taking it back already.
      const { rows } = await client.query<{ record: RequestRecord }>("SELECT record FROM requests WHERE request_id = $1 FOR UPDATE SKIP LOCKED", [
        stale.request_id,
      ]);
      const current = rows[0]?.record;
      if (!current || current.state !== "processing" || current.claim?.token !== stale.token) {
        // A claim whose request moved on without it (a person's change): it is over.
        if (current)
          await client.query("UPDATE claims SET ended_at = $2, ended_state = $3 WHERE token = $1 AND ended_at IS NULL", [stale.token, now, current.state]);
        return false;
      }
      const token = stale.token;
      const result = stale.result;
      let next: RequestRecord;
      if (result) {
        const reason = "result recorded: the worker finished but did not report";
        next =
          result.outcome === "completed"
            ? applyChange(current, { to: "completed", fields: result.fields, reason, by: "monitor", note: { token } }, now)
            : applyChange(current, { to: "failed", fields: { error: result.error }, reason, by: "monitor", note: { token } }, now);
      } else {
        const why = `no heartbeat for ${formatDuration(now - Number(stale.heartbeat_at))} from ${stale.worker} on ${stale.host}`;
        const attempt = current.attempt ?? 1;
        const maxAttempts = current.maxAttempts ?? this.options.maxAttempts;
        next =
          attempt < maxAttempts
            ? applyChange(current, { to: "queued", reason: `released: ${why} (attempt ${attempt} of ${maxAttempts})`, by: "monitor", note: { token } }, now)
            : applyChange(current, { to: "timeout", reason: `${why}; no attempts left (${attempt} of ${maxAttempts})`, by: "monitor", note: { token } }, now);
      }
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

  /**
   * Write a new version: the row, its new history steps (the feed, in position order), the end of
   * a claim it leaves, and the announcement, all in the caller's transaction. Secrets in the new
   * text are redacted first, as the local store does.
   */
  async #save(client: PgPoolClient, current: RequestRecord | null, decided: RequestRecord): Promise<RequestRecord> {
    const next = redactRequest(this.options.redaction, current, decided);
    const row = [
      next.requestId,
      next.workspace,
      next.state,
      next.createdAt,
      next.lastUpdatedAt,
      stateEnteredAt(next),
      next.notBefore ?? null,
      next.version,
      next,
    ];
    if (current) {
      await client.query(
        `UPDATE requests SET workspace = $2, state = $3, created_at = $4, last_updated_at = $5, state_since = $6, not_before = $7, version = $8, record = $9
          WHERE request_id = $1`,
        row,
      );
    } else {
      // Another process creating the same id at once: the key refuses the second.
      const { rowCount } = await client.query(
        `INSERT INTO requests (request_id, workspace, state, created_at, last_updated_at, state_since, not_before, version, record)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (request_id) DO NOTHING`,
        row,
      );
      if (rowCount !== 1) throw new ReqwatchError("ALREADY_EXISTS", `Request ${next.requestId} already exists.`);
    }
    const steps = (next.transitions ?? []).slice(current?.transitions?.length ?? 0);
    let position = "0";
    for (const step of steps) {
      const { rows } = await client.query<{ position: string }>(
        "INSERT INTO transitions (request_id, from_state, to_state, at, token, dropped, entry) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING position",
        [next.requestId, step.from, step.to, step.at, step.token ?? null, step.dropped === true, step],
      );
      position = rows[0]!.position;
    }
    const endedClaim = current?.claim?.token;
    if (endedClaim && next.claim?.token !== endedClaim) {
      await client.query("UPDATE claims SET ended_at = $2, ended_state = $3 WHERE token = $1 AND ended_at IS NULL", [
        endedClaim,
        next.lastUpdatedAt,
        next.state,
      ]);
    }
    await client.query("SELECT pg_notify($1, $2)", [
      CHANGES_CHANNEL,
      JSON.stringify({ position: Number(position), requestId: next.requestId, state: next.state }),
    ]);
    return next;
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
      throw error instanceof ReqwatchError ? error : storeError(this.#url, "The shared store refused the write", error);
    }
  }

  async #query<Row>(text: string, values: unknown[]): Promise<{ rows: Row[]; rowCount: number | null }> {
    this.#assertOpen();
    try {
      return await this.#pool.query<Row>(text, values);
    } catch (error) {
      throw storeError(this.#url, "The shared store's query failed", error);
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new ReqwatchError("BAD_INPUT", "The shared tracker is closed.");
  }
}
