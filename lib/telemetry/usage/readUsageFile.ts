import fs from "node:fs";
import { LINE_BOUNDS, readMarkedLines, type LineBounds } from "../agentFiles/readLines";
import type { Json } from "../agentFiles/lineFields";
import { replaces, tokensOf, USAGE_READERS, type UsageAgent, type UsageCall } from "./usageLines";

/** Where the ledger left a file: the next read goes on from there with the state its lines left. */
interface UsagePosition {
  dev: number;
  ino: number;
  offset: number;
  skipping: boolean;
  state: string;
}

/** A file to read for the ledger: where it was left (null: never read). */
export interface UsageJob {
  agent: UsageAgent;
  folder: string;
  path: string;
  from: UsagePosition | null;
  /** What it holds past `from` when it was looked at. */
  bytes: number;
}

/** What a reader thread is given: every job, and the index of the next one to take (shared by the threads). */
export interface ReaderThreadData {
  jobs: UsageJob[];
  next: Int32Array;
}

/**
 * A call as the ledger keeps it: usage_calls' columns in their order (./usageLedger.ts), its file's id
 * (0 here) and its cost (the agent's, or null) for the ledger to fill, then the rule between its
 * copies. A reader thread sends arrays of these: cheaper to send and to keep than objects.
 */
export type CallRow = [
  file: number,
  line: number,
  agent: UsageAgent,
  at: number,
  session: string,
  project: string,
  model: string | null,
  input: number,
  output: number,
  cacheRead: number,
  cacheWrite: number,
  extra: number,
  cost: number | null,
  costBy: "agent" | "table" | null,
  dedupe: string | null,
  dedupeHash: number | null,
  sidechain: 0 | 1,
  keep: "larger" | "latest" | null,
];
/** How many of a row's values are usage_calls' columns (the rule between copies is not kept). */
export const CALL_COLUMNS = 17;

/** A key's hash, 53 bits (two FNV-1a of it): the ledger's index finds a call by it, and the key itself says whether it is the one. */
function hashOf(key: string): number {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

/** What a read found: the file's new position, whether it was read from its start again (another file at its path, or cut short), its lines and calls. */
export interface UsageFileRead {
  job: UsageJob;
  position: UsagePosition;
  restarted: boolean;
  lines: number;
  malformed: number;
  oversized: number;
  /** Each call, with where its line starts (its key in the file). */
  calls: CallRow[];
}

const rowOf = (agent: UsageAgent, line: number, call: UsageCall): CallRow => {
  const { dedupe } = call;
  return [
    0,
    line,
    agent,
    call.at,
    call.session,
    call.project,
    call.model,
    call.input,
    call.output,
    call.cacheRead,
    call.cacheWrite,
    call.extra,
    call.agentCostUsd ?? null,
    null,
    dedupe?.key ?? null,
    dedupe ? hashOf(dedupe.key) : null,
    dedupe?.sidechain ? 1 : 0,
    dedupe?.keep ?? null,
  ];
};

interface FoundCall {
  line: number;
  call: UsageCall;
}

/**
 * One file read from where the ledger left it to its end (only the lines its agent's reader marks),
 * each line mapped to its calls; null when there is nothing new, or no such file. Reads only: the
 * ledger keeps the result (./usageLedger.ts), on this thread or the one that asked (./usageReaderThread.ts).
 */
export function readUsageFile(job: UsageJob, bounds: LineBounds = LINE_BOUNDS): UsageFileRead | null {
  const reader = USAGE_READERS[job.agent];
  let fd: number;
  try {
    // O_NOFOLLOW: a link in the agent's folder is not followed out of it.
    fd = fs.openSync(job.path, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return null;
    const known = job.from;
    const restarted = !known || known.dev !== stat.dev || known.ino !== stat.ino || stat.size < known.offset;
    let position: UsagePosition = restarted
      ? { dev: stat.dev, ino: stat.ino, offset: 0, skipping: false, state: JSON.stringify(reader.emptyState({ folder: job.folder, path: job.path })) }
      : known;
    if (!restarted && position.offset === stat.size) return null;
    const marks = { anywhere: reader.marks.anywhere?.map((mark) => Buffer.from(mark)), atStart: reader.marks.atStart?.map((mark) => Buffer.from(mark)) };
    const found: UsageFileRead = { job, position, restarted, lines: 0, malformed: 0, oversized: 0, calls: [] };
    const calls: FoundCall[] = [];
    let state = JSON.parse(position.state) as unknown;
    const seen = new Set<string>();
    while (position.offset < stat.size) {
      const read = readMarkedLines(fd, position, stat.size, marks, bounds);
      for (const { at, text } of read.lines) {
        const same = reader.sameAs?.(text);
        if (same !== undefined) {
          if (seen.has(same)) continue;
          seen.add(same);
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          found.malformed++;
          continue;
        }
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) continue;
        const told = reader.readLine(parsed as Json, state);
        state = told.state;
        for (const call of told.calls) calls.push({ line: at, call });
      }
      found.lines += read.lines.length;
      found.oversized += read.oversized;
      const moved = read.offset !== position.offset || read.skipping !== position.skipping;
      position = { ...position, offset: read.offset, skipping: read.skipping };
      if (read.atEnd || !moved) break;
    }
    found.position = { ...position, state: JSON.stringify(state) };
    found.calls = oncePerFile(job.path, calls).map(({ line, call }) => rowOf(job.agent, line, call));
    return found;
  } finally {
    fs.closeSync(fd);
  }
}

/** A call its file writes several times (Claude Code once per block of an answer), once: the copy the ledger's rule would keep of them. */
function oncePerFile(path: string, calls: FoundCall[]): FoundCall[] {
  const kept = new Map<string, number>();
  const out: (FoundCall | null)[] = [];
  for (const entry of calls) {
    const { dedupe } = entry.call;
    const at = dedupe ? kept.get(dedupe.key) : undefined;
    if (dedupe && at !== undefined) {
      const other = out[at]!;
      const copy = (of: typeof entry) => ({ path, line: of.line, sidechain: of.call.dedupe!.sidechain, total: tokensOf(of.call) });
      if (!replaces(dedupe.keep, copy(entry), copy(other))) continue;
      out[at] = null;
    }
    if (dedupe) kept.set(dedupe.key, out.length);
    out.push(entry);
  }
  return out.filter((entry) => entry !== null);
}
