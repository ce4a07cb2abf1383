// How a command ends other than with success, as main() maps them to exit codes; apart from
// context.ts, so that the CLI's entry does not load the tracker to know them.

/** A usage error found after commander's parsing (a state directory that does not exist, or is a file): exit 2. */
export class UsageError extends Error {}

/** A command stopped because tracking is off; it said so on stderr, and the CLI exits 0. */
export class TrackingOff extends Error {}

/**
 * A command that printed its report but did not change all it was named to change (`cancel nope`,
 * `retry` of a queued request): exit 1, so a script can tell, with its message on stderr.
 */
export class NotAllChanged extends Error {}
