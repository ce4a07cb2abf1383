import fs from "node:fs";
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { Redaction } from "../../model/redaction";
import type { LifecycleChange } from "../mapping/changes";
import { redactExport } from "../pipeline/redactExport";
import type { FilePosition } from "../store/queries/agentFiles";
import type { TelemetryStore } from "../store/telemetryStore";
import type { AgentFiles, AgentRun } from "./agentFiles";
import { LINE_BOUNDS, readLines, type LineBounds } from "./readLines";
import { transcriptsOf } from "./transcripts";

/** A look at every file and at the agent's runs this often, besides what the watcher reports: a watcher can miss. */
const RESCAN_EVERY_MS = 5000;
/** Runs are looked at this often: a killed one shows as stuck within a few seconds. */
const RUNS_EVERY_MS = 2000;
/** What the watcher reports is read this long after, so a burst of writes is one read. */
const SETTLE_MS = 20;

interface FollowOptions<S> {
  /** The agent's folder (Claude Code's ~/.claude, or CLAUDE_CONFIG_DIR). */
  folder: string;
  agent: AgentFiles<S>;
  store: TelemetryStore;
  redaction: Redaction;
  /** A file last written longer ago than this is not read back: its lines would be removed by the retention at once. */
  keepMs: number;
  /** Watch the folder and look again on a timer (the dashboard); without, `readAll` and `checkRuns` are called by hand (tests). */
  live?: boolean;
  now?: () => number;
  bounds?: LineBounds;
  onError?: (error: Error) => void;
}

/** What the follower read so far: the files it follows, the lines read and skipped. */
interface FollowStatus {
  folder: string;
  files: number;
  lines: number;
  malformed: number;
  oversized: number;
  /** The most bytes of one line held at once since it started. */
  mostHeld: number;
}

/**
 * Follows one agent's files (lib/telemetry/agentFiles/<agent>): reads each transcript from where it
 * was last read (its position in the telemetry store, never beside the file), only the bytes added
 * since, maps each whole line with the state the file's earlier lines left, redacts, and keeps the
 * changes and the new position in one transaction. A file replaced at its path (another inode) or
 * truncated is read again from its start (each line's step has a key of its own, so a line read
 * twice counts once). Nothing is ever written under the agent's folder: files are opened to read.
 */
export class AgentFileFollower<S> {
  readonly #positions = new Map<string, FilePosition>();
  /** Each file's modification time when it was last read to its end: a file rewritten to the same size is read again. */
  readonly #mtimes = new Map<string, number>();
  readonly #pending = new Set<string>();
  /** The files there when following began, the history: only one of those is judged by its age. */
  #history: Set<string> | null = null;
  #watcher: FSWatcher | null = null;
  /** The folders to watch that are not there yet. */
  #missing: string[] = [];
  #timers: NodeJS.Timeout[] = [];
  #settle: NodeJS.Timeout | null = null;
  /** The files the start has yet to read, one a turn: a look meanwhile leaves them to it. */
  #unread: string[] = [];
  #closed = false;
  /** Runs seen alive while busy: when one is gone, it ended about when it was noticed. */
  readonly #seenAlive = new Set<string>();
  readonly #ended = new Set<string>();
  /** Each session's process seen running it, for an agent that names none once it is gone. */
  readonly #running = new Map<string, number>();
  readonly #now: () => number;
  #mostHeld = 0;
  /** The store the positions were read from (`TelemetryStore.generation`). */
  #storeRead = -1;
  readonly #options: FollowOptions<S>;

  constructor(options: FollowOptions<S>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#loadPositions();
  }

  /**
   * Each file's position, as the store says it: read again when the store is another one (its file
   * deleted or replaced while the dashboard runs), whose positions are its own. A new store has none,
   * so each file within the retention is read again from its start into it (its lines' steps have
   * keys of their own: none is counted twice).
   */
  #loadPositions(): void {
    const { store, agent } = this.#options;
    const generation = store.generation();
    if (generation === this.#storeRead) return;
    this.#storeRead = generation;
    this.#positions.clear();
    this.#mtimes.clear();
    this.#endedFiles.clear();
    for (const position of store.filePositions(agent.name)) this.#positions.set(position.path, position);
  }

  /**
   * Read what is there, then (live) follow the folder. Live, the files are read one at a time, the
   * latest written first, with the thread free between them: a big folder read at start holds up
   * neither the receiver nor what the watcher reports meanwhile.
   */
  start(): void {
    if (!this.#options.live) {
      this.readAll();
      this.checkRuns();
      return;
    }
    this.#watch();
    this.#timers.push(
      setInterval(() => this.#guard(() => this.#look()), RESCAN_EVERY_MS).unref(),
      setInterval(() => this.#guard(() => this.checkRuns()), RUNS_EVERY_MS).unref(),
    );
    const found = this.#transcripts();
    this.#history = new Set(found);
    this.#unread = found
      .map((file) => ({ file, mtimeMs: statMtime(file) }))
      .sort((a, b) => b.mtimeMs - a.mtimeMs)
      .map(({ file }) => file);
    const next = () => {
      if (this.#closed) return;
      const file = this.#unread.shift();
      if (file === undefined) return this.#guard(() => this.checkRuns());
      this.#guard(() => {
        this.#loadPositions();
        this.readFile(file);
      });
      setImmediate(next);
    };
    setImmediate(next);
  }

  #guard(work: () => void): void {
    if (this.#closed) return;
    try {
      work();
    } catch (error) {
      this.#options.onError?.(error as Error);
    }
  }

  #watch(): void {
    const { folder, agent } = this.#options;
    const targets = agent.watched.map((watched) => path.join(folder, watched.folder));
    const present = targets.filter((target) => fs.existsSync(target));
    // A folder that appears later (the agent's first run) is watched from the next look on.
    this.#missing = targets.filter((target) => !present.includes(target));
    if (present.length === 0) return;
    const depth = Math.max(...agent.watched.map((watched) => watched.depth));
    this.#watcher = watch(present, { ignoreInitial: true, persistent: false, depth });
    const seen = (file: string) => {
      const relative = path.relative(folder, file).split(path.sep).join("/");
      if (agent.isTranscript(relative)) this.#pending.add(file);
      else if (!relative.startsWith("projects/")) this.#pending.add("");
      this.#settle ??= setTimeout(() => {
        this.#settle = null;
        this.#guard(() => this.#readPending());
      }, SETTLE_MS);
    };
    this.#watcher.on("add", seen).on("change", seen).on("unlink", seen);
    this.#watcher.on("error", (error) => this.#options.onError?.(error as Error));
  }

  /** The next look: a watched folder that appeared is watched, and every file is looked at. */
  #look(): void {
    if (this.#missing.some((target) => fs.existsSync(target))) {
      void this.#watcher?.close();
      this.#watcher = null;
      this.#watch();
    }
    // What the start has yet to read is left to it, one file a turn: read here in one go, a history of
    // 1 GB held the thread for 20 s. The files it has read are looked at, as a watcher can miss.
    this.#loadPositions();
    const unread = new Set(this.#unread);
    for (const file of this.#transcripts()) if (!unread.has(file)) this.readFile(file);
    if (this.#unheldTurn()) this.checkRuns();
  }

  #readPending(): void {
    this.#loadPositions();
    const files = [...this.#pending];
    this.#pending.clear();
    let runs = false;
    for (const file of files) {
      if (file === "") runs = true;
      else this.readFile(file);
    }
    if (runs || this.#unheldTurn()) this.checkRuns();
  }

  /** A turn left open whose holder was never seen (an agent whose runs hold its files): its process is looked for now, while it may still run, so it is named if it ends. */
  #unheldTurn(): boolean {
    if (!this.#options.agent.openTurn) return false;
    return [...this.#positions.values()].some((position) => position.session !== null && !this.#holders.has(position.session) && this.#leftOpen(position));
  }

  /** Every transcript under the agent's folder, each read from where it was. */
  readAll(): void {
    this.#loadPositions();
    const files = this.#transcripts();
    this.#history ??= new Set(files);
    for (const file of files) this.readFile(file);
  }

  #transcripts(): string[] {
    return transcriptsOf(this.#options.folder, this.#options.agent);
  }

  /** Read one file from its position to its end (in slices, each kept before the next). */
  readFile(file: string): void {
    const { agent, store } = this.#options;
    const known = this.#positions.get(file);
    if (known && unchanged(file, known, this.#mtimes.get(file))) return;
    let fd: number;
    try {
      // O_NOFOLLOW: a link in the agent's folder is not followed out of it.
      fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    } catch {
      return;
    }
    try {
      const stat = fs.fstatSync(fd);
      if (!stat.isFile()) return;
      this.#mtimes.set(file, stat.mtimeMs);
      let position = this.#positions.get(file);
      const replaced = !position || position.dev !== stat.dev || position.ino !== stat.ino || stat.size < position.offset;
      if (replaced) {
        // A file of the history last written before what is kept: followed from its end. One that
        // appeared since is new, whatever its time says (a copy keeps its original's; a clock moves).
        const old = !position && this.#history?.has(file) === true && stat.mtimeMs < this.#now() - this.#options.keepMs;
        position = {
          path: file,
          agent: agent.name,
          dev: stat.dev,
          ino: stat.ino,
          offset: old ? stat.size : 0,
          skipping: false,
          state: JSON.stringify(agent.emptyState()),
          session: null,
          lines: 0,
          malformed: 0,
          oversized: 0,
          readAt: this.#now(),
        };
        if (old) {
          store.keepFileRead({ changes: [], position });
          this.#positions.set(file, position);
          return;
        }
      }
      for (let more = true; more && !this.#closed;) {
        if (!replaced && position!.offset === stat.size) return;
        const read = readLines(fd, position!, stat.size, this.#options.bounds ?? LINE_BOUNDS);
        this.#mostHeld = Math.max(this.#mostHeld, read.held);
        let state = JSON.parse(position!.state) as S;
        const changes: LifecycleChange[] = [];
        let malformed = 0;
        for (const line of read.lines) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(line);
          } catch {
            malformed++;
            continue;
          }
          const mapped = agent.mapLine(parsed, state);
          state = mapped.state;
          changes.push(...mapped.changes);
        }
        const next: FilePosition = {
          ...position!,
          offset: read.offset,
          skipping: read.skipping,
          state: JSON.stringify(state),
          session: agent.sessionOf(state),
          lines: position!.lines + read.lines.length,
          malformed: position!.malformed + malformed,
          oversized: position!.oversized + read.oversized,
          readAt: this.#now(),
        };
        store.keepFileRead({ changes: redactExport({ changes, unmapped: [] }, this.#options.redaction).changes, position: next }, this.#now());
        this.#positions.set(file, next);
        position = next;
        more = !read.atEnd;
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * The agent's runs: a busy one whose process is gone left its turn open, and that turn says so.
   * It ended about when it was noticed if it was seen alive before, else at its last sign of life.
   */
  checkRuns(): void {
    const { agent, folder } = this.#options;
    if (!agent.runs || !agent.endedMidTurn) return;
    this.#loadPositions();
    // Its processes are looked for only while a file of its leaves a turn open that is not known to have ended.
    if (agent.openTurn && ![...this.#positions.values()].some((position) => this.#leftOpen(position))) return;
    // Compared with files' modification times: the machine's clock, not the injected one.
    const listedAt = Date.now();
    const files = () =>
      [...this.#positions.values()].map((position) => ({ path: position.path, session: position.session, state: JSON.parse(position.state) as S }));
    const listed = agent.runs(folder, files);
    if (agent.openTurn) return this.#checkHeld(listed, listedAt);
    for (const told of listed) {
      // A run whose agent cannot name its process once gone (Gemini CLI writes no pid): the one seen running its session.
      const run = told.pid === null ? { ...told, pid: this.#running.get(told.session) ?? null } : told;
      const id = `${run.session}:${run.pid ?? run.turn}`;
      if (!run.busy || this.#ended.has(id)) continue;
      if (run.liveness === "alive") {
        this.#seenAlive.add(id);
        if (run.pid !== null) this.#running.set(run.session, run.pid);
      }
      if (run.liveness !== "gone") continue;
      this.#running.delete(run.session);
      // Its file read to its end first, so the open turn is the one it was in.
      for (const position of [...this.#positions.values()].filter((position) => position.session === run.session)) this.readFile(position.path);
      // Its own transcript (`<session>.jsonl`), not a subagent's beside it.
      const latest = [...this.#positions.values()]
        .filter((position) => position.session === run.session)
        .sort(
          (a, b) => Number(path.basename(b.path) === `${run.session}.jsonl`) - Number(path.basename(a.path) === `${run.session}.jsonl`) || b.readAt - a.readAt,
        )[0];
      if (!latest) continue;
      const lastWrite = statMtime(latest.path);
      const endedAt = this.#seenAlive.has(id) ? this.#now() : Math.max(run.lastSeenAt, lastWrite);
      const change = agent.endedMidTurn(run, JSON.parse(latest.state) as S, endedAt);
      this.#ended.add(id);
      if (!change) continue;
      this.#options.store.keepFileRead(
        { changes: redactExport({ changes: [change], unmapped: [] }, this.#options.redaction).changes, position: latest },
        this.#now(),
      );
    }
  }

  /** The pid last seen holding each session's file (an agent whose runs are the processes holding its files). */
  readonly #holders = new Map<string, number>();
  /** Files whose open turn was found ended, at the offset they were read to then: not looked at again until written. */
  readonly #endedFiles = new Map<string, number>();

  /** A file whose state leaves a turn open, not found ended since it was last written. */
  #leftOpen(position: FilePosition): boolean {
    return this.#endedFiles.get(position.path) !== position.offset && this.#options.agent.openTurn!(JSON.parse(position.state) as S);
  }

  /**
   * An agent whose runs are the live processes holding its files (Codex): a file whose turn is open
   * that none holds ended mid-turn, by the process last seen holding it, or by one never seen (a run
   * killed before reqwatch looked). A file written since the runs were listed is left to the next look,
   * and none is judged while a process of the agent's cannot be looked into.
   */
  #checkHeld(listed: AgentRun[], listedAt: number): void {
    const { agent } = this.#options;
    if (listed.some((run) => run.liveness === "unknown")) return;
    const held = new Set<string>();
    for (const run of listed) {
      held.add(run.session);
      if (run.pid !== null) this.#holders.set(run.session, run.pid);
    }
    for (const known of [...this.#positions.values()]) {
      if (!known.session || held.has(known.session) || !this.#leftOpen(known)) continue;
      this.readFile(known.path);
      const position = this.#positions.get(known.path)!;
      const lastWrite = statMtime(position.path);
      const session = position.session;
      if (!session || lastWrite >= listedAt || !this.#leftOpen(position)) continue;
      const pid = this.#holders.get(session) ?? 0;
      this.#endedFiles.set(position.path, position.offset);
      const endedAt = pid > 0 ? this.#now() : lastWrite;
      const change = agent.endedMidTurn!({ pid, session, busy: true, liveness: "gone", lastSeenAt: lastWrite }, JSON.parse(position.state) as S, endedAt);
      if (change)
        this.#options.store.keepFileRead(
          { changes: redactExport({ changes: [change], unmapped: [] }, this.#options.redaction).changes, position },
          this.#now(),
        );
    }
  }

  status(): FollowStatus {
    const all = [...this.#positions.values()];
    const sum = (field: "lines" | "malformed" | "oversized") => all.reduce((total, position) => total + position[field], 0);
    return {
      folder: this.#options.folder,
      files: all.length,
      lines: sum("lines"),
      malformed: sum("malformed"),
      oversized: sum("oversized"),
      mostHeld: this.#mostHeld,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    if (this.#settle) clearTimeout(this.#settle);
    await this.#watcher?.close();
  }
}

/** The file is the one read, not written since, and read to its end: a look costs a stat, not an open. */
function unchanged(file: string, position: FilePosition, mtimeMs: number | undefined): boolean {
  try {
    const stat = fs.lstatSync(file);
    return stat.ino === position.ino && stat.dev === position.dev && stat.size === position.offset && stat.mtimeMs === mtimeMs;
  } catch {
    return true;
  }
}

function statMtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
