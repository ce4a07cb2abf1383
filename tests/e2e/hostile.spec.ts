import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { expect, test } from "./fixtures";

/** One raw HTTP request, so that the Host header can be anything, or absent. */
function raw(url: string, options: { method?: string; path: string; host?: string | null; headers?: Record<string, string>; body?: string }) {
  const { hostname, port } = new URL(url);
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.host !== null) headers.Host = options.host ?? `127.0.0.1:${port}`;
    const req = http.request({ hostname, port, method: options.method ?? "GET", path: options.path, headers, setHost: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
        // The event stream never ends: its first bytes are enough.
        if (res.headers["content-type"]?.includes("text/event-stream")) res.destroy();
      });
      res.on("close", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const PAGES = ["/", "/requests", "/requests/victim", "/sessions", "/sessions/s1", "/audit", "/health"];
const API = ["/api/requests", "/api/requests/victim", "/api/actions", "/api/actions/1", "/api/status", "/api/sessions", "/api/sessions/s1", "/api/health", "/api/events"];
const ACTION_ROUTES = ["/api/actions", "/api/actions/preview", "/api/actions/1/undo"];

test.describe("hostile requests", () => {
  test.beforeEach(({ tracker }) => {
    tracker.create({ requestId: "victim", workspace: "gateway", state: "processing" });
    tracker.transition("victim", "failed");
  });

  test("DNS rebinding: a foreign Host, a look-alike Host and no Host are refused on every route, the event stream included", async ({ app }) => {
    for (const route of [...PAGES, ...API]) {
      const own = await raw(app.url, { path: route });
      expect(own.status, `${route} with our Host`).toBeLessThan(500);
      for (const host of ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example:80", null]) {
        const response = await raw(app.url, { path: route, host });
        // Node refuses an HTTP/1.1 request without Host with 400 before it reaches us; ours say 403.
        expect([400, 403], `${route} with Host ${host}`).toContain(response.status);
        expect(response.body).not.toContain("victim");
        expect(response.headers["access-control-allow-origin"]).toBeUndefined();
      }
    }
  });

  test("cross-site writes: wrong token, other methods and simple-request content types are refused, and nothing changes", async ({ app, tracker, stateDir }) => {
    const before = fs.readFileSync(path.join(stateDir, "requests/victim.json"), "utf8");
    const body = JSON.stringify({ kind: "retry", ids: ["victim"] });
    const attempts = [
      ...ACTION_ROUTES.map((route) => ({ method: "POST", path: route, headers: { Origin: app.url, "x-reqwatch-token": "0".repeat(64), "content-type": "application/json" } })),
      ...ACTION_ROUTES.flatMap((route) =>
        ["PUT", "PATCH", "DELETE"].map((method) => ({ method, path: route, headers: { Origin: app.url, "content-type": "application/json" } as Record<string, string> })),
      ),
      { method: "POST", path: "/api/actions", headers: { Origin: "https://evil.example", "content-type": "text/plain" } },
      { method: "POST", path: "/api/actions", headers: { Origin: "null", "content-type": "application/x-www-form-urlencoded" } },
      { method: "POST", path: "/api/requests", headers: { Origin: app.url, "content-type": "application/json" } },
    ];
    for (const attempt of attempts) {
      const response = await raw(app.url, { ...attempt, body });
      // 400: Node refuses some bodies (a chunked DELETE) before Next sees them; refused all the same.
      expect([400, 403, 405], `${attempt.method} ${attempt.path}`).toContain(response.status);
      expect(response.headers["access-control-allow-origin"]).toBeUndefined();
    }
    // A CORS preflight gets no permission either.
    const preflight = await raw(app.url, {
      method: "OPTIONS",
      path: "/api/actions",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-reqwatch-token" },
    });
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    expect(preflight.headers["access-control-allow-headers"]).toBeUndefined();
    expect(fs.readFileSync(path.join(stateDir, "requests/victim.json"), "utf8")).toBe(before);
    expect(tracker.actions.list()).toEqual([]);
  });

  test("paths: ids and workspaces that try to leave the state directory are refused, and nothing outside it is read", async ({ app, stateDir, tracker }) => {
    // A valid request file just outside the state directory, and a symlink to it inside.
    const outside = path.join(stateDir, "..", `${path.basename(stateDir)}-secret`);
    fs.mkdirSync(outside, { recursive: true });
    fs.writeFileSync(
      path.join(outside, "secret.json"),
      JSON.stringify({ requestId: "secret", workspace: "gateway", state: "queued", createdAt: 1, lastUpdatedAt: 1, prompt: "TOP-SECRET" }),
    );
    fs.symlinkSync(path.join(outside, "secret.json"), path.join(stateDir, "requests/secret.json"));
    const ids = [
      "../secret",
      "..%2Fsecret",
      "%2e%2e%2fsecret",
      "%2E%2E%2F..%2F..%2Fetc%2Fpasswd",
      encodeURIComponent(path.join(outside, "secret")),
      "..%5Csecret",
      "secret%00",
      "secret%00.json",
      "x".repeat(5000),
      "%EF%BD%93ecret", // a fullwidth 's'
      "%E2%80%A4%E2%80%A4%2Fsecret", // one-dot leaders that look like '..'
      "secret",
    ];
    for (const id of ids) {
      for (const route of [`/api/requests/${id}`, `/api/sessions/${id}`]) {
        const response = await raw(app.url, { path: route });
        expect(response.status, route.slice(0, 80)).toBeGreaterThanOrEqual(400);
        expect(response.status, route.slice(0, 80)).toBeLessThan(500);
        expect(response.body).not.toContain("TOP-SECRET");
      }
      // The pages answer with their "not found" page.
      for (const route of [`/requests/${id}`, `/sessions/${id}`]) {
        const response = await raw(app.url, { path: route });
        expect(response.status, route.slice(0, 80)).toBeLessThan(500);
        expect(response.body, route.slice(0, 80)).toMatch(/not (be )?found/i);
        expect(response.body).not.toContain("TOP-SECRET");
      }
    }
    for (const query of ["workspace=..%2F..%2Fetc", "session=..%2Fsecret", "workspace=%00", "states=..%2Fx"]) {
      const response = await raw(app.url, { path: `/api/requests?${query}` });
      expect(response.status, query).toBe(400);
    }
    const list = await raw(app.url, { path: "/api/requests" });
    expect(list.body).not.toContain("TOP-SECRET");
    // The link was reported (the server's watcher wrote it to the shared index), not followed, and is still there.
    await expect.poll(() => tracker.unreadableFiles().map((file) => `${file.file}: ${file.reason}`)).toContain("requests/secret.json: is a symbolic link; links are not followed");
    expect(fs.lstatSync(path.join(stateDir, "requests/secret.json")).isSymbolicLink()).toBe(true);
  });
});
