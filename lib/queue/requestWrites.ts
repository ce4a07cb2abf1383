import { randomUUID } from "../process/crypto";
import { activeTraceparent } from "../process/activeTrace";
import { ReqwatchError } from "../model/errors";
import { assertRequestId, assertWorkspace } from "../model/ids";
import type { RequestRecord } from "../model/requestFormat";
import { validateChange, validateFields } from "../model/requestInput";
import { applyChange, changesNothing, newRequest, type Change } from "../model/transition";
import type { ChangeInput, CreateInput } from "../types";

/**
 * What `create` and `update` do to a request, the same in every store (the folder's, the shared
 * one): the input checked before anything is read, then a step from the request as it is now (null:
 * none) to what it becomes, which each store commits its own way.
 */
export type RequestStep = { requestId: string; step: (current: RequestRecord | null) => RequestRecord };

export function creation(input: CreateInput, now: () => number): RequestStep {
  const { requestId = randomUUID(), workspace, ...rest } = input;
  assertRequestId(requestId);
  assertWorkspace(workspace);
  const { state, reason, by, ...given } = rest;
  // Created inside an instrumented gateway's span: its trace is the request's.
  const traceparent = given.traceparent ?? activeTraceparent() ?? undefined;
  const validated = validateFields({ ...given, ...(traceparent !== undefined && { traceparent }) }) ?? {};
  return {
    requestId,
    step: (current) => {
      if (current) throw new ReqwatchError("ALREADY_EXISTS", `Request ${requestId} already exists.`);
      return newRequest({ ...validated, requestId, workspace, state, reason, by }, now());
    },
  };
}

export function updating(requestId: string, change: ChangeInput, now: () => number): RequestStep {
  assertRequestId(requestId);
  const fixed = typeof change === "function" ? null : validateChange(change);
  return {
    requestId,
    step: (current) => {
      const request = mustExist(requestId, current);
      const next = fixed ?? validateChange((change as (current: RequestRecord) => Change)(request));
      return changesNothing(request, next) ? request : applyChange(request, next, now());
    },
  };
}

export function mustExist(requestId: string, current: RequestRecord | null): RequestRecord {
  if (!current) throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
  return current;
}
