import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { everyRoute } from "../helpers/apiRoutes";
import { actionToken, expect, test } from "./fixtures";

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
/** Every route of the HTTP API with every method it takes, from the route table (lib/http/apiRoutes.ts). */
const API = everyRoute();
const PAGE_ROUTES = PAGES.map((path) => ({ method: "GET", path }));
/** Every route that changes something: each is tried with a forged token, other methods and simple content types. */
const WRITE_ROUTES = API.filter((route) => route.method === "POST").map((route) => route.path);

test.describe("hostile requests", () => {
  test.beforeEach(({ tracker }) => {
    tracker.create({ requestId: "victim", workspace: "gateway", state: "processing" });
    tracker.transition("victim", "failed");
  });

  test("DNS rebinding: a foreign Host, a look-alike Host and no Host are refused on every route and method, the event stream included", async ({ app }) => {
    for (const { method, path: route } of [...PAGE_ROUTES, ...API]) {
      const own = await raw(app.url, { method, path: route });
      expect(own.status, `${method} ${route} with our Host`).toBeLessThan(500);
      for (const host of ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example:80", null]) {
        const response = await raw(app.url, { method, path: route, host });
        // Node refuses an HTTP/1.1 request without Host with 400 before it reaches us; ours say 403.
        expect([400, 403], `${method} ${route} with Host ${host}`).toContain(response.status);
        expect(response.body).not.toContain("victim");
        expect(response.headers["access-control-allow-origin"]).toBeUndefined();
      }
    }
  });

  test("every answer forbids framing and sniffing: pages, the read API, the event stream, scripts, errors and refusals", async ({ app }) => {
    const page = await raw(app.url, { path: "/" });
    const script = /src="(\/_next\/static\/[^"]+\.js)"/.exec(page.body)?.[1];
    expect(script, "a script of the page").toBeTruthy();
    const answers = [page, await raw(app.url, { path: script! })];
    for (const { method, path: route } of [
      ...PAGE_ROUTES,
      ...API,
      ...["/api/requests/nope", "/api/requests?states=bogus", "/no-such-page"].map((path) => ({ method: "GET", path })),
    ]) {
      answers.push(await raw(app.url, { method, path: route }));
    }
    answers.push(await raw(app.url, { path: "/api/status", host: "evil.example" }), await raw(app.url, { method: "DELETE", path: "/api/status" }));
    for (const answer of answers) {
      expect(answer.headers["x-frame-options"]).toBe("DENY");
      expect(answer.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(answer.headers["x-content-type-options"]).toBe("nosniff");
      expect(answer.headers["access-control-allow-origin"]).toBeUndefined();
    }
  });

  test("cross-site writes: wrong token, other methods and simple-request content types are refused, and nothing changes", async ({
    app,
    stateDir,
    operator,
    reader,
  }) => {
    const before = fs.readFileSync(path.join(stateDir, "requests/victim.json"), "utf8");
    const body = JSON.stringify({ kind: "retry", ids: ["victim"] });
    const attempts = [
      ...WRITE_ROUTES.map((route) => ({
        method: "POST",
        path: route,
        headers: { Origin: app.url, "x-reqwatch-token": "0".repeat(64), "content-type": "application/json" },
      })),
      ...WRITE_ROUTES.flatMap((route) =>
        ["PUT", "PATCH", "DELETE"].map((method) => ({
          method,
          path: route,
          headers: { Origin: app.url, "content-type": "application/json" } as Record<string, string>,
        })),
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
    expect(operator.actions.list()).toEqual([]);
    expect(reader.pauses()).toEqual([]);
  });

  test("paths: ids and workspaces that try to leave the state directory are refused, and nothing outside it is read", async ({ app, stateDir, reader }) => {
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
        expect(response.status, route.slice(0, 80)).toBe(404);
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
    await expect
      .poll(() => reader.unreadableFiles().map((file) => `${file.file}: ${file.reason}`))
      .toContain("requests/secret.json: is a symbolic link; links are not followed");
    expect(fs.lstatSync(path.join(stateDir, "requests/secret.json")).isSymbolicLink()).toBe(true);
  });
});

test.describe("sizes", () => {
  test("an action body over the limit is refused with 413, stated or streamed, and nothing changes", async ({ page, app, tracker, operator }) => {
    tracker.create({ requestId: "victim", workspace: "gateway", state: "processing" });
    tracker.transition("victim", "failed");
    const headers = { Origin: app.url, "x-reqwatch-token": await actionToken(page, app.url), "content-type": "application/json" };
    // 30,000 ids: over the 2 MB limit (and the 10,000-id cap).
    const body = JSON.stringify({ kind: "retry", ids: ["victim", ...Array.from({ length: 30_000 }, (_, i) => `padding-request-id-${i}-${"x".repeat(60)}`)] });
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
    const stated = await raw(app.url, { method: "POST", path: "/api/actions", headers, body });
    expect(stated.status).toBe(413);
    expect(JSON.parse(stated.body).error.code).toBe("TOO_LARGE");
    // The rest of the body was never read: the connection is closed, not left for the next request to be reset on.
    expect(stated.headers.connection).toBe("close");
    // Chunked, with no Content-Length: counted as it arrives.
    const streamed = await new Promise<{ status: number; connection?: string }>((resolve, reject) => {
      const { port } = new URL(app.url);
      const req = http.request(
        { host: "127.0.0.1", port, method: "POST", path: "/api/actions", headers: { ...headers, "transfer-encoding": "chunked" } },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
        },
      );
      req.on("error", (error) =>
        (error as NodeJS.ErrnoException).code === "EPIPE" || (error as NodeJS.ErrnoException).code === "ECONNRESET" ? undefined : reject(error),
      );
      for (let i = 0; i < 40; i++) req.write(body.slice(i * 100_000, (i + 1) * 100_000));
      req.end();
    });
    expect(streamed).toEqual({ status: 413, connection: "close" });
    // Within the limit, the same request works: the limit is what refused it.
    const small = await raw(app.url, { method: "POST", path: "/api/actions/dry-run", headers, body: JSON.stringify({ kind: "retry", ids: ["victim"] }) });
    expect(small.status).toBe(200);
    expect(tracker.get("victim")?.state).toBe("failed");
    expect(operator.actions.list()).toEqual([]);
  });

  test("a 50 MB output is shown cut with a link to download it whole, and the server keeps answering meanwhile", async ({ page, app, tracker }) => {
    test.setTimeout(120_000);
    const output = "0123456789abcdef".repeat((50 * 1024 * 1024) / 16);
    tracker.create({ requestId: "huge", workspace: "gateway", state: "processing", prompt: "summarize the logs" });
    tracker.transition("huge", "completed", { fields: { output } });

    // Other clients meanwhile: the status API keeps answering while the big request is read, shown and downloaded.
    let slowest = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const started = performance.now();
        expect((await fetch(`${app.url}/api/status`)).status).toBe(200);
        slowest = Math.max(slowest, performance.now() - started);
        // Paces the other client: a request every few milliseconds, not a busy loop.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    await page.goto("/requests/huge");
    const block = page.locator("details", { has: page.getByLabel("Output", { exact: true }) });
    await expect(block).toContainText(`(${(50 * 1024 * 1024).toLocaleString("en-US")} characters)`);
    await expect(block).toContainText(`Showing the first 100,000 of ${(50 * 1024 * 1024).toLocaleString("en-US")} characters.`);
    await block.locator("summary").click();
    await expect(page.getByLabel("Output", { exact: true })).toHaveText(output.slice(0, 100_000));
    const [download] = await Promise.all([page.waitForEvent("download"), block.getByRole("link", { name: "Download the full output" }).first().click()]);
    expect(download.suggestedFilename()).toBe("huge-output.txt");
    expect(fs.statSync(await download.path()).size).toBe(50 * 1024 * 1024);
    // The page itself stays small: the text is cut in what the server sends, not hidden in the browser.
    const html = await (await fetch(`${app.url}/requests/huge`)).text();
    expect(html.length).toBeLessThan(2 * 1024 * 1024);
    // A download read a little and then left waiting: while the server is still sending it, it answers others.
    const held = (await fetch(`${app.url}/api/requests/huge/download/output`)).body!.getReader();
    let received = (await held.read()).value!.length;
    expect(received).toBeLessThan(50 * 1024 * 1024);
    expect((await fetch(`${app.url}/api/status`)).status).toBe(200);
    for (let chunk = await held.read(); !chunk.done; chunk = await held.read()) received += chunk.value.length;
    expect(received).toBe(50 * 1024 * 1024);
    polling = false;
    await poller;
    // A figure, not a check: how fast is for the benchmark (the note and the README), and a test never fails on a timing.
    console.log(`slowest /api/status while the 50 MB request was served: ${Math.round(slowest)} ms`);
  });
});
