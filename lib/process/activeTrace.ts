import { isSpanContextValid, trace } from "@opentelemetry/api";

/**
 * The OpenTelemetry span active where the library is called (an instrumented gateway's request
 * handler), as a W3C traceparent; null when there is none. The API finds the application's own
 * tracer provider through its global registry, so a bundled copy of the API sees it.
 */
export function activeTraceparent(): string | null {
  const context = trace.getActiveSpan()?.spanContext();
  if (!context || !isSpanContextValid(context)) return null;
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}
