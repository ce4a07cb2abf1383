import { NextResponse, type NextRequest } from "next/server";
import { isLoopbackHost } from "@/lib/http/loopback";

/**
 * Every request, page or API: refuse a Host that is not a loopback name (DNS rebinding: a page on
 * evil.example whose name now points at 127.0.0.1 must not read or drive the dashboard).
 */
export function proxy(request: NextRequest): NextResponse {
  if (!isLoopbackHost(request.headers.get("host"))) {
    return NextResponse.json({ error: { code: "FORBIDDEN", message: "reqwatch answers only to localhost, 127.0.0.1 and [::1]." } }, { status: 403 });
  }
  return NextResponse.next();
}
