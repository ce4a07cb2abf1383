import type { TrackerContext } from "../store/context";
import { assertRequestId } from "../model/ids";
import { redactField, redactRequestFields } from "../model/redaction";
import { assertManaged } from "../store/ownership";
import { writeResultMarker } from "../stateFiles/resultMarker";
import type { Tracker } from "../types";

export type WorkerResult = Parameters<Tracker["recordResult"]>[2];

/**
 * Write the result marker before `complete` or `fail`, so a crash in between loses nothing (the
 * monitor applies it). A marker is a file too: its text is redacted as the request's will be.
 */
export function recordResult(ctx: TrackerContext, requestId: string, token: string, result: WorkerResult): void {
  assertRequestId(requestId);
  assertManaged(ctx, "Recording a result");
  const redaction = ctx.options.redaction;
  const redacted: WorkerResult =
    result.outcome === "failed"
      ? { ...result, error: redactField(redaction, "error", result.error) }
      : result.fields
        ? { ...result, fields: redactRequestFields(redaction, result.fields) }
        : result;
  writeResultMarker(ctx.dir, { requestId, token, writtenAt: ctx.now(), ...redacted });
}
