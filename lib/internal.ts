/**
 * What reqwatch's own scripts and benches load (dist/internal.cjs, not in the package): the library,
 * beside it the roles of an opened folder as reqwatch's programs hold them (`openRoles`), and the helpers a script needs to set up a folder.
 */
export * from "./index";
export { openRoles, type Recording } from "./tracker";
export { adoptStateDir } from "./store/ownership";
export { ACTIVITY_RANGES } from "./model/activity";
export { firstFreePort, PORTS_TRIED } from "./http/freePort";
// The charts' bench (bench/charts.mjs) fills an index and a telemetry store directly, then draws their charts.
export { activityView } from "./views/activityView";
export { telemetryActivityView } from "./views/telemetryActivityView";
export { TelemetryStore } from "./telemetry/store/telemetryStore";
export { DROP_COUNTING_TRIGGERS, RECOUNT } from "./db/ddl";
