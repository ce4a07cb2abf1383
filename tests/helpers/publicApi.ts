// What the package publishes, by name: one list the packed package and the type-level test both check.

/** The library's names at run time, all of them: what `require("reqwatch")` and `import * as` give. */
export const EXPORTS = [
  "PermanentError",
  "ReqwatchError",
  "STATES",
  "TERMINAL_STATES",
  "TRANSITIONS",
  "TimeoutError",
  "canTransition",
  "isReqwatchError",
  "isTerminal",
  "openSharedTracker",
  "openTracker",
  "redactSecrets",
  "runSharedWorker",
  "runWorker",
];

/**
 * The library's types, all of them: the tracker a gateway or worker calls and what its calls take
 * and give. The dashboard's, the CLI's and the MCP server's (the reader, the operator, the feed, the ingest,
 * the index guard) are not among them.
 */
export const TYPES = [
  ...["Tracker", "TrackerOptions", "RedactOptions", "ExtraPattern", "Ownership", "Access", "RecoveryReport", "IndexingProgress"],
  ...["CreateInput", "ChangeInput", "Change", "RequestRecord", "RequestFields", "TransitionEntry", "CallbackInfo", "State", "TerminalState", "ErrorCode"],
  ...["ListFilters", "RequestPage", "RequestSummary"],
  ...["Claim", "ClaimOptions", "Delivery", "DeliveryOutcome", "CompleteResult", "FailOptions"],
  ...["Handler", "HandlerContext", "RunWorkerOptions", "WorkerHandle", "WorkerStats"],
  ...[
    "MonitorOptions",
    "MonitorWithRetention",
    "MonitorHandle",
    "MonitorPass",
    "MonitorCounts",
    "StuckRequest",
    "StuckCause",
    "RetentionRun",
    "RetentionHandle",
  ],
  ...[
    "SessionTracker",
    "SessionResult",
    "SessionRecord",
    "CommandEntry",
    "CommandInput",
    "CommandStatus",
    "ContextSnapshot",
    "FileInput",
    "SnapshotInput",
    "StartOutcome",
  ],
  ...["SharedTracker", "SharedTrackerOptions", "RunSharedWorkerOptions", "SharedHandler", "SharedHandlerContext"],
];

/** What the library's tracker and its session tracker declare: what a gateway, a worker or a hook calls; the read model, the operator's actions and the index's upkeep are the roles' (lib/roles/). */
export const TRACKER_MEMBERS = [
  "ownership",
  "options",
  "openReport",
  "create",
  "transition",
  "update",
  "get",
  "list",
  "claimNext",
  "heartbeat",
  "recordResult",
  "complete",
  "fail",
  "waitForResult",
  "sessions",
  "startMonitor",
  "rebuildIndex",
  "indexing",
  "close",
];
export const SESSION_TRACKER_MEMBERS = ["current", "start", "recordCommand", "recordFile", "recordedPath", "updateSnapshot", "reset", "get"];
