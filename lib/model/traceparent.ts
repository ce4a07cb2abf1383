/** A W3C traceparent (`00-<trace id>-<span id>-<flags>`), with a trace and a span id that are not all zeros. */
export const TRACEPARENT_PATTERN = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The parts of a W3C traceparent, or null when `value` is not one. */
export function parseTraceparent(value: unknown): { traceId: string; spanId: string; flags: number } | null {
  if (typeof value !== "string" || !TRACEPARENT_PATTERN.test(value.trim())) return null;
  const [, traceId, spanId, flags] = value.trim().split("-");
  return { traceId: traceId!, spanId: spanId!, flags: parseInt(flags!, 16) };
}
