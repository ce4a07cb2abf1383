import { z } from "zod";

/** A resume point: `<generation>:<seq>`. Anything else is passed on and answered with `reset`. */
const since = z.string().max(64);

export function sinceFrom(request: Request): string | null {
  const raw = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("since");
  if (raw === null) return null;
  const parsed = since.safeParse(raw);
  return parsed.success ? parsed.data : "invalid";
}
