import "server-only";
import { timingSafeEqual } from "node:crypto";
import { ReqwatchError } from "@/lib/model/errors";
import { ACTION_TOKEN_HEADER } from "@/lib/http/actionToken";
import { FOREIGN_HOST_MESSAGE, isLoopbackHost } from "@/lib/http/loopback";
import { getActionToken } from "./runtime";

function forbidden(message: string): never {
  throw new ReqwatchError("FORBIDDEN", message);
}

/**
 * Every state-changing route calls this first (they are POST only). It requires an Origin that is
 * this very server (a missing or `null` Origin is refused: CSRF), and the per-launch token the
 * page was rendered with, which another site cannot read.
 */
export function assertActionAllowed(request: Request): void {
  const host = request.headers.get("host");
  if (!isLoopbackHost(host)) forbidden(FOREIGN_HOST_MESSAGE);
  const origin = request.headers.get("origin");
  if (!origin || origin === "null") forbidden("Actions need the Origin header of the dashboard's own page.");
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    forbidden("Actions need the Origin header of the dashboard's own page.");
  }
  if (originHost !== host) forbidden("Actions are accepted only from the dashboard's own page (same origin).");
  const sent = Buffer.from(request.headers.get(ACTION_TOKEN_HEADER) ?? "");
  const expected = Buffer.from(getActionToken());
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
    forbidden("The action token is missing or out of date; reload the page.");
  }
}
