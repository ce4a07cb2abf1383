/**
 * The library's public surface: what a gateway or a worker calls (open, create, transition and
 * update, claim, heartbeat, complete, fail, get, list, sessions, the monitor, close), runWorker, and
 * the types and errors those take and give. The CLI, dashboard and MCP server use more of the same
 * tracker (`TrackerService`, lib/trackerInterface.ts), which is not published.
 */
export { openTracker, type Tracker, type CreateInput, type ChangeInput, type MonitorOptions, type MonitorWithRetention } from "./tracker";
export type { TrackerOptions, RedactOptions } from "./store/options";
/** The redaction every write applies, for text of your own (a transition's `reason`, logs): secrets become `[redacted: <kind>]`. */
export { redactSecrets, type ExtraPattern } from "./model/redaction";
export type { Ownership, Access } from "./store/ownership";
export { STATES, TERMINAL_STATES, TRANSITIONS, canTransition, isTerminal, type State, type TerminalState } from "./model/states";
export { ReqwatchError, isReqwatchError, TimeoutError, type ErrorCode } from "./model/errors";
export type { RequestRecord, RequestFields, TransitionEntry, CallbackInfo } from "./model/requestFormat";
export type { Change } from "./model/transition";
export type { RequestSummary, RequestPage } from "./db/queries/listRequests";
export type { ListFilters } from "./model/listFilters";
export type { RecoveryReport } from "./recovery/recover";
export { runWorker, PermanentError, type Handler, type HandlerContext, type RunWorkerOptions, type WorkerHandle, type WorkerStats } from "./worker/runWorker";
export type { Claim, ClaimOptions } from "./queue/claimNext";
export type { Delivery, DeliveryOutcome, CompleteResult, FailOptions } from "./queue/deliver";
export type { MonitorPass, MonitorCounts, StuckRequest } from "./monitor/monitorPass";
export type { StuckCause } from "./model/stuckCauses";
export type { MonitorHandle, RetentionHandle } from "./monitor/startMonitor";
export type { RetentionRun } from "./actions/retention";
export type { SessionTracker, SessionResult, CommandInput, CommandStatus, FileInput, SnapshotInput, StartOutcome } from "./sessions/sessionTracker";
export type { SessionRecord, CommandEntry, ContextSnapshot } from "./stateFiles/sessionFile";
