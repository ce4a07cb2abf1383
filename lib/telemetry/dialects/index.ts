import { aiSdk } from "./aiSdk";
import { claudeCode } from "./claudeCode";
import type { Dialect } from "./dialect";
import { genAi } from "./genAi";
import { messaging } from "./messaging";
import { openInference } from "./openInference";
import { traceloop } from "./traceloop";

/**
 * The dialects the receiver understands, in the order they are asked: a client's own first (it
 * may also carry the generic conventions' attributes, and knows better what they mean), the
 * generic conventions last.
 */
export const DIALECTS: readonly Dialect[] = [claudeCode, messaging, aiSdk, openInference, traceloop, genAi];

export type { Dialect } from "./dialect";
