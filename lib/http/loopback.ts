/**
 * Host names that can only mean this machine. A request whose Host is anything else reached the
 * server through a name an attacker controls (DNS rebinding) and is refused.
 */
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** `localhost:4600` → true; `evil.example:4600`, `127.0.0.1.evil.example` → false. */
export function isLoopbackHost(host: string | null | undefined): boolean {
  if (!host) return false;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  return !!match && LOOPBACK_NAMES.has(match[1]!);
}

/** What a request with any other Host is told. */
export const FOREIGN_HOST_MESSAGE = "reqwatch answers only to localhost, 127.0.0.1 and [::1].";
