import { ReqwatchError } from "./errors";

/** Where a session was seen: the state folder's (recorded, or carried by its requests), or what the OpenTelemetry receiver kept. */
export const SESSION_SOURCES = ["otel"] as const;
export type SessionSource = (typeof SESSION_SOURCES)[number];

/** `?source=` of a session's page and API: none for the folder's, `otel` for a received one. */
export function parseSessionSource(given: string | null | undefined): SessionSource | null {
  if (given === null || given === undefined || given === "") return null;
  if (hasSessions(given)) return given;
  throw new ReqwatchError(
    "BAD_INPUT",
    `Unknown session source ${JSON.stringify(given.slice(0, 100))}: leave it out for the state folder's sessions, or use otel for those received over OpenTelemetry.`,
  );
}

/** Whether a source (the requests table's `source`) holds sessions with a page of their own. */
export function hasSessions(source: string | null | undefined): source is SessionSource {
  return (SESSION_SOURCES as readonly (string | null | undefined)[]).includes(source);
}
