/**
 * A condition on a call part `p` of the telemetry store: it is not the same call told again by a
 * span inside another call's span (the Anthropic SDK's own inside OpenInference's), so the usage
 * and a session's page count each call once, as a lifecycle's row does (mapping/fold.ts).
 */
export const CALL_TOLD_ONCE = `NOT EXISTS (SELECT 1 FROM parts o WHERE o.seq = p.seq AND o.kind = 'call' AND json_extract(p.fields, '$.parentSpanId') IS NOT NULL AND json_extract(o.fields, '$.spanId') = json_extract(p.fields, '$.parentSpanId'))`;
