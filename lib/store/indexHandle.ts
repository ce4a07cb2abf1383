import { openIndex, type FileIdentity, type IndexDb, type OpenedIndex } from "../db/openIndex";
import type { IndexingProgress } from "./context";

/**
 * The index of one opened folder, reopenable: the connection every operation reads through
 * (`ctx.db`), replaced when the file at index.db's path is lost and opened again, and how far a
 * rebuild left for later has come. The one owner of both; the context only reads them.
 */
export class IndexHandle {
  #opened: OpenedIndex;
  #indexing: IndexingProgress | null = null;

  constructor(readonly file: string) {
    this.#opened = openIndex(file);
  }

  get db(): IndexDb {
    return this.#opened.db;
  }

  /** The file the connection has open (a lost index is told by a different one at the path). */
  get identity(): FileIdentity | null {
    return this.#opened.identity;
  }

  /** The generation the index was opened with, until it records one. */
  get generation(): string {
    return this.#opened.generation;
  }

  /** The file was new or unreadable when opened: it must be rebuilt from the request files. */
  get needsRebuild(): boolean {
    return this.#opened.needsRebuild;
  }

  /** Open what is at the path now; the old connection is returned, for the caller to close once no call holds it. */
  reopen(): IndexDb {
    const old = this.#opened.db;
    this.#opened = openIndex(this.file);
    return old;
  }

  /** A rebuild under way on another thread (`rebuild: "in-background"`): files written so far, of how many; null when the index is complete. */
  get indexing(): IndexingProgress | null {
    return this.#indexing;
  }

  /** The open left the rebuild for later. */
  leaveRebuild(now: number): void {
    this.#indexing = { done: 0, total: 0, startedAt: now };
  }

  /** Every file is in the index. */
  complete(): void {
    this.#indexing = null;
  }
}
