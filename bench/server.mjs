// Start the dashboard server (dist/server.cjs) on a free port over a state directory, for the benches that need the dashboard.
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { createParser } from "eventsource-parser";

/** A port no one listens on now, on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Start the server and wait until it answers (GET /api/health, polled every `pollMs`), or, with
 * `pollMs` null, until it prints the line a person starting it waits for ("dashboard on http://..."),
 * which is when it listens: no request of the bench's own is in the server's way.
 */
export async function startServer(ROOT, stateDir, env = {}, nodeArgs = [], pollMs = 100) {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, "dist/server.cjs"), "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd: ROOT,
    // What the server receives is kept beside its own folder, not in the user's cache with every dashboard's.
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", REQWATCH_TELEMETRY_DIR: "state-folder", ...env, REQWATCH_STATE_DIR: stateDir },
    stdio: ["ignore", pollMs === null ? "pipe" : "ignore", "ignore"],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise((resolve) => {
      child.once("exit", resolve);
      child.kill("SIGTERM");
    });
  if (pollMs === null) {
    await new Promise((resolve, reject) => {
      let printed = "";
      const timer = setTimeout(() => reject(new Error("the server did not start")), 60_000);
      child.once("exit", (code) => reject(new Error(`the server exited (${code})`)));
      child.stdout.on("data", (chunk) => {
        printed += chunk;
        if (printed.includes(`dashboard on ${url}/`)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    return { url, child, stop };
  }
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {}
    if (i * pollMs > 60_000) throw new Error("the server did not start");
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return { url, child, stop };
}

/**
 * An open page's news of received lifecycles: the dashboard's event stream, read as a tab reads it.
 * `next()` resolves (with the time) at the next `sources` event naming `otel`; `close()` ends the stream.
 */
export async function otelNews(url) {
  const events = await fetch(`${url}/api/events`, { headers: { accept: "text/event-stream" } });
  const reader = events.body.getReader();
  let waiting = null;
  const parser = createParser({
    onEvent: (event) => {
      if (event.event === "sources" && waiting && JSON.parse(event.data).changed.includes("otel")) waiting(performance.now());
    },
  });
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(new TextDecoder().decode(value));
    }
  })();
  return {
    next: () =>
      new Promise((resolve) => {
        waiting = (at) => {
          waiting = null;
          resolve(at);
        };
      }),
    close: async () => {
      await reader.cancel();
      await pump.catch(() => {});
    },
  };
}
