/** Export `n` of a stream of Claude Code-like turns: logs on even exports, spans on odd ones, protobuf. */
export function exportBody(n: number): { signal: "logs" | "traces"; body: Buffer };
export const PER_EXPORT: number;
