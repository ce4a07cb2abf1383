import type { State } from "../model/states";
import type { SourceDb } from "../sqlite/openSourceDb";
import { timeOf } from "../model/storedValues";
import { emptyCounts, type SourceRead } from "./sourceMessage";
import { LIVE, readNewest, readRows, reading, stateOf, valuesFor, type Row, type SourceQueue } from "./sourceQueue";

/** A stuck row as a look found it: no text, which only the rows a page shows are read with. */
export interface StuckRow {
  requestId: string;
  /** The row's id as the table keeps it. */
  rowId: unknown;
  /** Why, in words (put together when asked). */
  reason: () => string;
}

interface Kept {
  status: string;
  facts: Row;
  requestId: string;
  /** The last call that found it live. */
  seen: number;
}

/** What a look at a queue says: its counts, when it was last written, and its stuck rows. */
export interface QueueLook {
  counts: Record<State, number>;
  total: number;
  /** The newest time read from the table; null when it is empty, or not read through yet. */
  lastWriteAt: number | null;
  stuck: StuckRow[];
  /** The table is not read through yet (a big one is read in slices at first): `stuck` holds what the rows read so far hold. */
  counting: boolean;
}

/** Rows read at a time on a first read, between looks at the clock. */
const SLICE = 256;
/** Ids asked for at once. */
const BATCH = 500;

/**
 * The live rows of another program's queue, kept between looks without their text: each one's
 * `facts`, the columns its owner's stuck rule reads. The owner's text can sit before those columns
 * in a row (claude-mem's does), so reading a row's facts reads past its text: a row is read once
 * when it first appears, again when its status changes, and at every write only when its status
 * is not `settled`. The counts per state come from a GROUP BY, which an index on the status can
 * answer alone. Between writes, a look only judges the rows it keeps at a new time.
 */
export class LiveRows {
  readonly #live = new Map<unknown, Kept>();
  #calls = 0;
  /** The highest id read in id order: a row above it is new. */
  #cursor: unknown = null;
  #readThrough = false;
  #latest: number | null = null;
  #counts = emptyCounts();
  #total = 0;
  readonly #select: string;
  readonly #queue: SourceQueue;

  constructor(queue: SourceQueue) {
    this.#queue = queue;
    this.#select = [`${queue.id} AS _id`, `${queue.status} AS _status`, ...queue.times.map((time, i) => `${time} AS _t${i}`), queue.facts].join(", ");
  }

  /** True until the table was read through once. */
  get counting(): boolean {
    return !this.#readThrough;
  }

  /**
   * Bring the rows kept up to the table: the counts, then rows new since the last call (for at most
   * `budgetMs` of reading, the rest at the next call), then rows read before whose status changed.
   */
  catchUp(db: SourceDb, budgetMs = Infinity): void {
    this.#calls++;
    reading(this.#queue, () =>
      db.transaction(() => {
        this.#count(db);
        this.#readNew(db, budgetMs);
        if (this.#cursor !== null) this.#readChanged(db);
      })(),
    );
  }

  /** The rows kept, judged at `now`. */
  look(now: number): QueueLook {
    // A newest time read from part of the table would make claude-mem's left-over rule judge too early.
    const lastWriteAt = this.#readThrough ? this.#latest : null;
    const stuck: StuckRow[] = [];
    for (const [rowId, { facts, requestId }] of this.#live) {
      const reason = this.#queue.stuck(facts, now, lastWriteAt);
      if (reason !== null) stuck.push({ requestId, rowId, reason });
    }
    return { counts: { ...this.#counts }, total: this.#total, lastWriteAt, stuck, counting: !this.#readThrough };
  }

  #count(db: SourceDb): void {
    const queue = this.#queue;
    this.#counts = emptyCounts();
    this.#total = 0;
    for (const [value, n] of db.prepare(`SELECT ${queue.status}, count(*) FROM "${queue.table}" t GROUP BY ${queue.status}`).raw().all() as [
      unknown,
      number,
    ][]) {
      this.#counts[stateOf(queue, value)] += n;
      this.#total += n;
    }
  }

  /** Rows above the cursor, in id order, a slice at a time. */
  #readNew(db: SourceDb, budgetMs: number): void {
    const queue = this.#queue;
    const started = performance.now();
    const first = db.prepare(`SELECT ${this.#select} FROM "${queue.table}" t WHERE ${queue.id} IS NOT NULL ORDER BY ${queue.id} LIMIT ?`);
    const next = db.prepare(`SELECT ${this.#select} FROM "${queue.table}" t WHERE ${queue.id} > ? ORDER BY ${queue.id} LIMIT ?`);
    for (;;) {
      const rows = (this.#cursor === null ? first.all(SLICE) : next.all(this.#cursor, SLICE)) as Row[];
      for (const row of rows) this.#take(row);
      if (rows.length) this.#cursor = rows.at(-1)!._id;
      if (rows.length < SLICE) {
        this.#readThrough = true;
        return;
      }
      if (performance.now() - started >= budgetMs) {
        this.#readThrough = false;
        return;
      }
    }
  }

  /** Rows at or below the cursor that are live now or were at the last call. */
  #readChanged(db: SourceDb): void {
    const queue = this.#queue;
    const live = valuesFor(queue, LIVE);
    const moving = live.filter((value) => !queue.settled.includes(value));
    const toRead: unknown[] = [];
    if (moving.length) {
      const rows = db
        .prepare(`SELECT ${this.#select} FROM "${queue.table}" t WHERE ${queue.status} IN (${moving.map(() => "?").join(", ")}) AND ${queue.id} <= ?`)
        .all(...moving, this.#cursor) as Row[];
      for (const row of rows) this.#take(row);
    }
    for (const status of live.filter((value) => queue.settled.includes(value))) {
      // The ids alone, which an index on the status holds: no row is read.
      const ids = db.prepare(`SELECT ${queue.id} FROM "${queue.table}" t WHERE ${queue.status} = ? AND ${queue.id} <= ?`).pluck().all(status, this.#cursor);
      for (const id of ids) {
        const kept = this.#live.get(id);
        if (kept?.status === status) kept.seen = this.#calls;
        else toRead.push(id);
      }
    }
    // Rows that left the live states: read once more for the time they changed, then let go.
    for (const [id, kept] of this.#live) if (kept.seen !== this.#calls) toRead.push(id);
    for (const id of toRead) this.#live.delete(id);
    const byId = db.prepare(`SELECT ${this.#select} FROM "${queue.table}" t WHERE ${queue.id} IN (SELECT value FROM json_each(?))`);
    for (let i = 0; i < toRead.length; i += BATCH) for (const row of byId.all(JSON.stringify(toRead.slice(i, i + BATCH))) as Row[]) this.#take(row);
  }

  #take(row: Row): void {
    for (let i = 0; i < this.#queue.times.length; i++) {
      const time = timeOf(row[`_t${i}`]);
      if (time !== undefined && (this.#latest === null || time > this.#latest)) this.#latest = time;
    }
    if (LIVE.includes(stateOf(this.#queue, row._status)))
      this.#live.set(row._id, { status: String(row._status), facts: row, requestId: this.#queue.requestId(row), seen: this.#calls });
    else this.#live.delete(row._id);
  }
}

/** Which rows a read gives with their text: the newest `newest` (-1: every one), and the newest `stuck` of the stuck ones. */
export interface Listing {
  newest?: number;
  stuck?: number;
}

/**
 * Read a queue once, as `reqwatch source` and the MCP tool do: the counts and the stuck rows, and
 * with their text only the rows the listing asks for.
 */
export function readQueue(db: SourceDb, queue: SourceQueue, now: number, listing: Listing = {}): SourceRead {
  return reading(queue, () =>
    db.transaction(() => {
      const rows = new LiveRows(queue);
      rows.catchUp(db);
      const { counts, total, lastWriteAt, stuck } = rows.look(now);
      const newest = listing.newest ?? -1;
      return {
        counts,
        total,
        lastWriteAt,
        stuck: stuck.length,
        stuckMessages: listing.stuck
          ? readRows(
              db,
              queue,
              stuck.map((row) => row.rowId),
              now,
              lastWriteAt,
              listing.stuck,
            )
          : [],
        messages: newest === 0 ? [] : readNewest(db, queue, now, lastWriteAt, newest),
      };
    })(),
  );
}
