/** The library's public surface: what a gateway or worker imports. */
export { openTracker, type Tracker, type CreateInput, type ChangeInput } from "./tracker";
export type { TrackerOptions } from "./options";
export { STATES, TERMINAL_STATES, TRANSITIONS, canTransition, isTerminal, type State } from "./states";
export { ReqwatchError, type ErrorCode } from "./errors";
export type { RequestRecord, RequestFields, TransitionEntry, CallbackInfo } from "./schema";
export type { RequestSummary, RequestPage } from "./index/queries/listRequests";
export type { ListFilters } from "./listFilters";
export type { RecoveryReport } from "./recovery/recover";
export type { CleanupReport, CleanupOptions } from "./cleanup";
export type { Change } from "./transition";
export { runWorker, PermanentError, type Handler, type HandlerContext, type RunWorkerOptions, type WorkerHandle, type WorkerStats } from "./worker/runWorker";
export { TimeoutError } from "./errors";
export type { Claim, ClaimOptions } from "./queue/claimNext";
export type { Delivery, DeliveryOutcome, CompleteResult, FailOptions } from "./queue/deliver";
export type { RetryReport, RetryTarget, RetryOptions } from "./queue/retry";
export type { MonitorPass, MonitorCounts, StuckRequest } from "./monitor/monitorPass";
export type { MonitorHandle } from "./monitor/startMonitor";
