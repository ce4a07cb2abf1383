import type { IncomingMessage, ServerResponse } from "node:http";
import { FOREIGN_HOST_MESSAGE, isLoopbackHost } from "../http/loopback";
import { answerReadApi } from "./readApi";
import type { Runtime } from "./runtime";

/** On every response, pages, API, assets and event streams alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // The action buttons must not be clickable through another site's invisible frame (clickjacking).
  "Content-Security-Policy": "frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'",
  "X-Frame-Options": "DENY",
  // A downloaded output is text, never sniffed into HTML.
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/**
 * The dashboard server's one request listener. Every request, whatever its path: the security
 * headers, then a Host that is not a loopback name is refused (DNS rebinding: a page on
 * evil.example whose name now points at 127.0.0.1 must not read or drive the dashboard), then the
 * read API answers its paths itself, the event stream included, and everything else goes on to
 * `next`, Next.js (pages, downloads, actions).
 */
export function dashboardListener(runtime: () => Runtime, next: (request: IncomingMessage, response: ServerResponse) => unknown) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    if (!isLoopbackHost(request.headers.host)) {
      const body = JSON.stringify({ error: { code: "FORBIDDEN", message: FOREIGN_HOST_MESSAGE } });
      response.writeHead(403, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
      response.end(body);
      return;
    }
    if (answerReadApi(runtime, request, response)) return;
    void next(request, response);
  };
}
