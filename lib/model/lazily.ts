/**
 * A value made on its first use, then kept: for what a module would otherwise build as it loads (the
 * zod schemas, the OTLP messages, a collator). Built at load, they took a good part of each
 * command's start, and a command uses few of them (a `list` that a follower vouches for, none).
 */
export function lazily<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
