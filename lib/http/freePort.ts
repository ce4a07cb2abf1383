import net from "node:net";

/** How many ports from the default one on a dashboard tries before it says none is free. */
export const PORTS_TRIED = 20;

/** Whether `host` can listen on `port` now: listened on and closed at once. */
function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" || error.code === "EACCES" ? resolve(false) : reject(error)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * The first port from `port` on that `host` can listen on, for a dashboard started on the default
 * port beside another (a second folder's, `npm run demo` beside `npm start`); null when none of
 * the `tries` ports is free. A port named by the user is never moved: the server fails on it instead.
 */
export async function firstFreePort(port: number, host: string, tries = PORTS_TRIED): Promise<number | null> {
  for (let candidate = port; candidate < port + tries && candidate <= 65535; candidate++) {
    if (await canListen(candidate, host)) return candidate;
  }
  return null;
}
