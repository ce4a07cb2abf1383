import { ABORTED_BY_CALLER, UNFINISHED_CALL } from "../../mapping/stoppedCalls";
/**
 * A condition on a call part `p` of the telemetry store: it is not the same call told again by a
 * span inside another call's span (the Anthropic SDK's own inside OpenInference's), so the usage
 * and a session's page count each call once, as a lifecycle's row does (mapping/fold.ts).
 */
export const CALL_TOLD_ONCE = `NOT EXISTS (SELECT 1 FROM parts o WHERE o.seq = p.seq AND o.kind = 'call' AND json_extract(p.fields, '$.parentSpanId') IS NOT NULL AND json_extract(o.fields, '$.spanId') = json_extract(p.fields, '$.parentSpanId'))`;

export type { UsageSums } from "../../mapping/fold";

/** A call that may have been billed: not a failed attempt that said no tokens and did not stop mid-answer (a known $0, as mapping/fold.ts counts it). */
const STOPPED = `(json_extract(p.fields, '$.error') LIKE '${ABORTED_BY_CALLER}%' OR json_extract(p.fields, '$.error') = '${UNFINISHED_CALL.replace(/'/g, "''")}')`;
const BILLED = `NOT (json_extract(p.fields, '$.success') = 0 AND json_extract(p.fields, '$.inputTokens') IS NULL AND json_extract(p.fields, '$.outputTokens') IS NULL AND NOT coalesce(${STOPPED}, 0))`;

/** What model calls (the `parts p` of kind call) used, summed: the columns of UsageSums. */
export const CALL_SUMS = `count(*) AS calls,
    coalesce(sum(json_extract(p.fields, '$.inputTokens')), 0) AS inputTokens,
    coalesce(sum(json_extract(p.fields, '$.outputTokens')), 0) AS outputTokens,
    coalesce(sum(json_extract(p.fields, '$.cacheReadTokens')), 0) AS cacheReadTokens,
    coalesce(sum(json_extract(p.fields, '$.cacheWriteTokens')), 0) AS cacheWriteTokens,
    coalesce(sum(coalesce(json_extract(p.fields, '$.costUsd'), json_extract(p.fields, '$.estimatedCostUsd'))), 0) AS costUsd,
    coalesce(sum(json_extract(p.fields, '$.costUsd') IS NULL AND ${BILLED} AND json_extract(p.fields, '$.estimatedCostUsd') IS NOT NULL), 0) AS estimatedCalls,
    coalesce(sum(json_extract(p.fields, '$.costUsd') IS NULL AND ${BILLED} AND json_extract(p.fields, '$.estimatedCostUsd') IS NULL), 0) AS unpricedCalls`;
