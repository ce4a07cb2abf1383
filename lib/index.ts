/**
 * The library's public surface: what a gateway or a worker calls (open, create, transition and
 * update, claim, heartbeat, complete, fail, get, list, sessions, the monitor, close), runWorker, and
 * the types and errors those take and give. The types are lib/types.ts, the contract the
 * implementations import. The CLI, dashboard and MCP server open the same folder as role objects
 * (a reader, an operator, the index's upkeep: lib/roles/), which are not published.
 */
export { openTracker } from "./tracker";
/** The same queue on PostgreSQL, for gateways and workers on several hosts (docs/SHARED-STORE.md); loads `pg` when called. */
export { openSharedTracker } from "./postgres/sharedTracker";
export { runSharedWorker } from "./postgres/runSharedWorker";
/** The redaction every write applies, for text of your own (a transition's `reason`, logs): secrets become `[redacted: <kind>]`. */
export { redactSecrets } from "./model/redaction";
export { STATES, TERMINAL_STATES, TRANSITIONS, canTransition, isTerminal } from "./model/states";
export { ReqwatchError, isReqwatchError, TimeoutError } from "./model/errors";
export { runWorker, PermanentError } from "./worker/runWorker";
export type {
  Tracker,
  TrackerOptions,
  RedactOptions,
  ExtraPattern,
  Ownership,
  Access,
  RecoveryReport,
  IndexingProgress,
  CreateInput,
  ChangeInput,
  Change,
  RequestRecord,
  RequestFields,
  TransitionEntry,
  CallbackInfo,
  State,
  TerminalState,
  ErrorCode,
  ListFilters,
  RequestPage,
  RequestSummary,
  Claim,
  ClaimOptions,
  Delivery,
  DeliveryOutcome,
  CompleteResult,
  FailOptions,
  Handler,
  HandlerContext,
  RunWorkerOptions,
  WorkerHandle,
  WorkerStats,
  MonitorOptions,
  MonitorWithRetention,
  MonitorHandle,
  MonitorPass,
  MonitorCounts,
  StuckRequest,
  StuckCause,
  RetentionRun,
  RetentionHandle,
  SessionTracker,
  SessionResult,
  SessionRecord,
  CommandEntry,
  CommandInput,
  CommandStatus,
  ContextSnapshot,
  FileInput,
  SnapshotInput,
  StartOutcome,
  SharedTracker,
  SharedTrackerOptions,
  RunSharedWorkerOptions,
  SharedHandler,
  SharedHandlerContext,
} from "./types";
