import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { MAX_QUEUED_BYTES, answerEventStream } from "../../lib/dashboard/eventStream";
import type { Runtime } from "../../lib/dashboard/runtime";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

it("a client that stops reading is cut off once the queue passes the limit, and unsubscribed", async () => {
  // The feed hub, reduced to what the stream uses: the test holds the function that writes to the stream.
  let send: ((chunk: string) => void) | null = null;
  let unsubscribed = 0;
  const runtime = {
    feed: {
      subscribe: (_since: string | null, write: (chunk: string) => void) => {
        send = write;
        return () => unsubscribed++;
      },
    },
  } as unknown as Runtime;
  let served: http.ServerResponse | null = null;
  const server = http.createServer((request, response) => {
    served = response;
    answerEventStream(runtime, request, response, new URLSearchParams());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // A browser tab that asked for the stream and then never read from it again.
  const socket = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
  socket.write("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  socket.pause();
  await expect.poll(() => send !== null).toBe(true);

  const chunk = `data: ${"x".repeat(1024 * 1024)}\n\n`;
  let written = 0;
  while (!served!.destroyed && written < 10 * MAX_QUEUED_BYTES) {
    send!(chunk);
    written += chunk.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Cut off, not left to queue 10 times the limit.
  expect(served!.destroyed).toBe(true);
  await expect.poll(() => unsubscribed).toBe(1);
  socket.destroy();
});
