import type { Hash } from "node:crypto";

/**
 * node:crypto's few functions reqwatch calls, loading it on the first call: loading it is a large
 * part of a command's start, and a command that only reads makes no id and no hash.
 */
const crypto = () => process.getBuiltinModule("node:crypto");

export const randomUUID = (): string => crypto().randomUUID();
export const randomBytes = (size: number): Buffer => crypto().randomBytes(size);
export const createHash = (algorithm: string): Hash => crypto().createHash(algorithm);
