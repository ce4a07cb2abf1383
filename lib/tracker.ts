import { randomUUID } from "node:crypto";
import { openArchive, type ArchiveDb } from "./archive";
import { cleanup, restore, type CleanupOptions, type CleanupReport } from "./cleanup";
import { commitChange } from "./commitChange";
import type { TrackerContext } from "./context";
import { ReqwatchError } from "./errors";
import { assertRequestId, assertWorkspace } from "./ids";
import { countByState, type StateCounts } from "./index/queries/countByState";
import { getRequest } from "./index/queries/getRequest";
import { listRequests, type RequestPage } from "./index/queries/listRequests";
import { listUnreadable, type UnreadableFile } from "./index/queries/listUnreadable";
import { openIndex, readMeta } from "./index/openIndex";
import { resolveListFilters, type ListFilters } from "./listFilters";
import { resolveTrackerOptions, type ResolvedTrackerOptions, type TrackerOptions } from "./options";
import { recover, type RecoveryReport } from "./recovery/recover";
import { describeZodError, requestFieldsSchema, type RequestFields, type RequestRecord } from "./schema";
import { ensureStateDir, stateDirAt, type StateDir } from "./stateDir";
import type { State } from "./states";
import { applyChange, newRequest, type Change, type NewRequestInput } from "./transition";

export interface CreateInput extends RequestFields {
  /** Default: a random UUID. */
  requestId?: string;
  workspace: string;
  state?: NewRequestInput["state"];
  reason?: string;
  by?: string;
}

/** A change, or a function of the current request that returns one (for read-modify-write). */
export type ChangeInput = Change | ((current: RequestRecord) => Change);

export interface Tracker {
  readonly stateDir: StateDir;
  readonly options: ResolvedTrackerOptions;
  /**
   * The recovery report of `open`; with `recover: false`, the report of the index rebuild if one
   * was needed (no hung requests timed out), else null.
   */
  readonly openReport: RecoveryReport | null;
  create(input: CreateInput): RequestRecord;
  /** Move a request to `to` (checked against the transition table), optionally setting fields. */
  transition(requestId: string, to: State, extra?: Omit<Change, "to">): RequestRecord;
  /** Set fields and/or change state; a function receives the current request under the writers' lock. */
  update(requestId: string, change: ChangeInput): RequestRecord;
  get(requestId: string): RequestRecord | null;
  list(filters?: ListFilters): RequestPage;
  countsByState(filters?: { workspace?: string }): StateCounts;
  unreadableFiles(): UnreadableFile[];
  /** The index's feed generation: changes when the index is rebuilt. */
  generation(): string;
  recover(options?: { hungAfterMs?: number }): RecoveryReport;
  cleanup(options?: Partial<CleanupOptions>): CleanupReport;
  restore(requestId: string): RequestRecord;
  close(): void;
}

function validateFields(fields: RequestFields | undefined): RequestFields | undefined {
  if (fields === undefined) return undefined;
  const parsed = requestFieldsSchema.safeParse(fields);
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid request fields: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

function validateChange(change: Change): Change {
  return { ...change, fields: validateFields(change.fields) };
}

/**
 * Open the tracker on a state directory: create its folders, open (or rebuild) the index, and
 * run recovery unless `recover: false`.
 */
export function openTracker(options: TrackerOptions = {}): Tracker {
  const resolved = resolveTrackerOptions(options);
  const dir = stateDirAt(resolved.stateDir);
  ensureStateDir(dir);
  const opened = openIndex(dir.indexFile);
  const ctx: TrackerContext = { dir, db: opened.db, now: resolved.now };

  let archiveDb: ArchiveDb | null = null;
  const archive = () => (archiveDb ??= openArchive(dir.archiveFile));

  // An index that must be rebuilt is rebuilt even with `recover: false`; only recovery changes states.
  const openReport =
    resolved.recover || opened.needsRebuild ? recover(ctx, { hungAfterMs: resolved.recover ? resolved.hungAfterMs : null }) : null;

  function mustExist(requestId: string, current: RequestRecord | null): RequestRecord {
    if (!current) throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
    return current;
  }

  return {
    stateDir: dir,
    options: resolved,
    openReport,

    create(input) {
      const { requestId = randomUUID(), workspace, ...rest } = input;
      assertRequestId(requestId);
      assertWorkspace(workspace);
      const { state, reason, by, ...fields } = rest;
      const validated = validateFields(fields) ?? {};
      return commitChange(ctx, requestId, (current) => {
        if (current) throw new ReqwatchError("ALREADY_EXISTS", `Request ${requestId} already exists.`);
        return newRequest({ ...validated, requestId, workspace, state, reason, by }, ctx.now());
      })!;
    },

    transition(requestId, to, extra = {}) {
      return this.update(requestId, { ...extra, to });
    },

    update(requestId, change) {
      assertRequestId(requestId);
      const fixed = typeof change === "function" ? null : validateChange(change);
      return commitChange(ctx, requestId, (current) => {
        const request = mustExist(requestId, current);
        const next = fixed ?? validateChange((change as (current: RequestRecord) => Change)(request));
        return applyChange(request, next, ctx.now());
      })!;
    },

    get(requestId) {
      assertRequestId(requestId);
      return getRequest(ctx.db, requestId);
    },

    list(filters) {
      return listRequests(ctx.db, resolveListFilters(filters));
    },

    countsByState(filters = {}) {
      if (filters.workspace !== undefined) assertWorkspace(filters.workspace);
      return countByState(ctx.db, filters);
    },

    unreadableFiles() {
      return listUnreadable(ctx.db);
    },

    generation() {
      return readMeta(ctx.db, "generation") ?? opened.generation;
    },

    recover(options = {}) {
      return recover(ctx, { hungAfterMs: options.hungAfterMs ?? resolved.hungAfterMs });
    },

    cleanup(options = {}) {
      return cleanup(ctx, archive, { olderThanMs: options.olderThanMs ?? resolved.retentionMs, ...options });
    },

    restore(requestId) {
      assertRequestId(requestId);
      return restore(ctx, archive, requestId);
    },

    close() {
      opened.db.close();
      archiveDb?.close();
    },
  };
}
