/** A session's own page: the folder's, or one received over OpenTelemetry (`?source=otel`). */
export function sessionPath(row: { sessionId: string; source: string | null }): string {
  return `/sessions/${encodeURIComponent(row.sessionId)}${row.source ? `?source=${encodeURIComponent(row.source)}` : ""}`;
}
