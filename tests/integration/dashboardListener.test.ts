import { describe, expect, it } from "vitest";
import { SECURITY_HEADERS } from "../../lib/dashboard/dashboardListener";
import { aDashboard } from "../helpers/dashboard";
import { everyRoute } from "../helpers/apiRoutes";

/** A block of the event loop no slower machine makes shorter: the delay reported is at least this long. */
const BLOCK_MS = 200;

type ErrorBody = { error: { code: string; message: string } };

describe("the dashboard server's read API", () => {
  it("answers status, the requests table, a request, sessions and health from the state directory", async () => {
    const { tracker, ask } = await aDashboard();
    tracker.create({ requestId: "a", workspace: "gateway", state: "queued", prompt: "first" });
    tracker.create({ requestId: "b", workspace: "gateway", state: "processing" });
    tracker.transition("b", "failed", { fields: { error: "boom" } });

    const status = await ask("/api/status");
    expect(status.status).toBe(200);
    expect(status.headers["content-type"]).toBe("application/json");
    expect(status.json<{ counts: Record<string, number> }>().counts).toMatchObject({ queued: 1, failed: 1, processing: 0 });

    const failed = (await ask("/api/requests?states=failed")).json<{ items: { requestId: string }[] }>();
    expect(failed.items.map((row) => row.requestId)).toEqual(["b"]);

    const detail = await ask("/api/requests/a");
    expect(detail.status).toBe(200);
    expect(detail.json<{ request: unknown }>().request).toMatchObject({ requestId: "a", prompt: "first" });

    expect((await ask("/api/sessions")).json()).toEqual({ sessions: [] });
    // The dashboard runs in this process: a block of the event loop is a delay the health must report.
    const blockedUntil = performance.now() + BLOCK_MS;
    while (performance.now() < blockedUntil);
    const health = (await ask("/api/health")).json<{ ok: boolean; unreadableFiles: number; eventLoopDelay: { p50: number; p99: number; max: number } }>();
    expect(health).toMatchObject({ ok: true, unreadableFiles: 0 });
    const delay = health.eventLoopDelay;
    expect(delay.max).toBeGreaterThanOrEqual(BLOCK_MS / 2);
    expect(delay.p50).toBeLessThanOrEqual(delay.p99);
    expect(delay.p99).toBeLessThanOrEqual(delay.max);
  });

  it("unknown ids get 404, a bad query or path 400, other methods 405; each with a code and a message", async () => {
    const { ask, passedOn } = await aDashboard();
    for (const [path, status, code] of [
      ["/api/requests/nope", 404, "NOT_FOUND"],
      ["/api/sessions/nope", 404, "NOT_FOUND"],
      ["/api/sessions/nope?source=otel", 404, "NOT_FOUND"],
      ["/api/sessions/nope?source=bogus", 400, "BAD_INPUT"],
      ["/api/sessions/not%20an%20id?source=otel", 400, "BAD_INPUT"],
      ["/api/requests?states=bogus", 400, "BAD_INPUT"],
      ["/api/requests/%E0%A4%A", 400, "BAD_INPUT"],
      ["/api/requests/..%2F..%2Fetc%2Fpasswd", 400, "BAD_INPUT"],
    ] as const) {
      const response = await ask(path);
      expect(response.status, path).toBe(status);
      const { error } = response.json<ErrorBody>();
      expect(error.code, path).toBe(code);
      expect(error.message, path).toEqual(expect.any(String));
    }
    const post = await ask("/api/status", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
    expect(post.json<ErrorBody>().error.code).toBe("METHOD_NOT_ALLOWED");
    const head = await ask("/api/status", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(Number(head.headers["content-length"])).toBeGreaterThan(0);
    expect(passedOn).toEqual([]);
  });

  it("a foreign Host is refused before anything is read, on every route of the table and every method it takes, and nothing reaches Next.js", async () => {
    const { tracker, ask, passedOn } = await aDashboard();
    tracker.create({ requestId: "victim", workspace: "gateway", state: "queued", prompt: "TOP-SECRET" });
    const tried = [...everyRoute(), ...["/requests", "/_next/static/x.js"].map((path) => ({ method: "GET", path }))];
    for (const { method, path } of tried) {
      for (const host of ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example:80"]) {
        const response = await ask(path, { host, method });
        expect(response.status, `${method} ${path} with Host ${host}`).toBe(403);
        expect(response.json<ErrorBody>().error.code).toBe("FORBIDDEN");
        expect(response.text).not.toContain("TOP-SECRET");
      }
    }
    expect(passedOn).toEqual([]);
    expect((await ask("/api/requests/victim", { host: "localhost:4600" })).status).toBe(200);
  });

  it("each route is answered by the layer the route table names: the read API its own, Next.js the others", async () => {
    const { url, tracker, passedOn } = await aDashboard();
    tracker.create({ requestId: "victim", workspace: "gateway", state: "queued" });
    for (const { method, path, route } of everyRoute()) {
      const before = passedOn.length;
      // Headers are enough (the event stream never ends): the body is let go.
      const stop = new AbortController();
      const response = await fetch(`${url}${path}`, { method, signal: stop.signal });
      stop.abort();
      expect({ route: `${method} ${route.path}`, passedOn: passedOn.slice(before) }).toEqual({
        route: `${method} ${route.path}`,
        passedOn: route.answeredBy === "next" ? [`${method} ${path}`] : [],
      });
      if (route.answeredBy === "readApi") expect(response.status, `${method} ${path}`).not.toBe(405);
    }
  });

  it("everything else goes on to Next.js, and every answer, ours, Next's or a refusal, carries the security headers", async () => {
    const { ask, passedOn } = await aDashboard();
    const answers = [await ask("/api/status"), await ask("/api/nope", { host: "evil.example" }), await ask("/requests?states=failed")];
    for (const path of ["/api/actions/3", "/api/requests/a/download/json", "/api/status/", "/api/actions"])
      answers.push(await ask(path, { method: path === "/api/actions" ? "POST" : "GET" }));
    expect(passedOn).toEqual([
      "GET /requests?states=failed",
      "GET /api/actions/3",
      "GET /api/requests/a/download/json",
      "GET /api/status/",
      "POST /api/actions",
    ]);
    for (const answer of answers) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(answer.headers[name.toLowerCase()]).toBe(value);
    }
  });

  it("the event stream: where the feed is first, then each change; a resume gets what it missed; a closed stream leaves no subscriber", async () => {
    const { tracker, runtime, stream, passedOn } = await aDashboard();
    const live = await stream();
    expect(live.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const ready = await live.next("ready");
    expect(ready.data).toMatchObject({ counts: { queued: 0 } });
    tracker.create({ requestId: "new-one", workspace: "gateway", state: "queued" });
    const changes = (await live.next("changes")).data;
    expect(changes.changes.map((change) => change.requestId)).toEqual(["new-one"]);

    // A browser that reconnects with the last id it saw gets exactly what it missed.
    tracker.transition("new-one", "processing");
    const resumed = await stream({ "Last-Event-ID": ready.id! });
    const missed = (await resumed.next("changes")).data;
    expect(missed.changes.map((change) => `${change.requestId} ${change.request?.state}`)).toEqual(["new-one queued", "new-one processing"]);
    const unknown = await stream({ "Last-Event-ID": "nonsense" });
    expect((await unknown.next("reset")).data).toMatchObject({ reason: "unknown event id" });

    expect(runtime.feed.size).toBe(3);
    for (const open of [live, resumed, unknown]) open.close();
    await expect.poll(() => runtime.feed.size).toBe(0);
    expect(passedOn).toEqual([]);
  });
});
