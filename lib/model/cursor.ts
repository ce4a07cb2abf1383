import { ReqwatchError } from "./errors";

/**
 * A keyset cursor: the sort key of the last row of a page, tied to the sort it was made for. Pure
 * (no Buffer), so the browser can make the same cursor when it moves a row itself.
 */
interface CursorPayload {
  s: string;
  o: string;
  v: number;
  id: string;
}

const toBase64Url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromBase64Url = (text: string) => atob(text.replace(/-/g, "+").replace(/_/g, "/"));

export function encodeCursor(payload: CursorPayload): string {
  // Ids and sort names are ASCII (REQUEST_ID_PATTERN): btoa needs no UTF-8 step.
  return toBase64Url(JSON.stringify(payload));
}

export function decodeCursor(cursor: string, sort: string, order: string): { value: number; id: string } {
  let payload: Partial<CursorPayload>;
  try {
    payload = JSON.parse(fromBase64Url(cursor)) as Partial<CursorPayload>;
  } catch {
    throw new ReqwatchError("BAD_INPUT", "Invalid cursor: it was not made by reqwatch.");
  }
  if (typeof payload.v !== "number" || typeof payload.id !== "string") {
    throw new ReqwatchError("BAD_INPUT", "Invalid cursor: it was not made by reqwatch.");
  }
  if (payload.s !== sort || payload.o !== order) {
    throw new ReqwatchError("BAD_INPUT", "Invalid cursor: it belongs to another sort order.");
  }
  return { value: payload.v, id: payload.id };
}
