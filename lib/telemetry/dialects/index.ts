import { bullmq } from "./bullmq";
import { claudeCode } from "./claudeCode";
import type { Dialect } from "./dialect";
import { geminiCli } from "./geminiCli";
import { genAi } from "./genAi";
import { messaging } from "./messaging";

/**
 * The dialects the receiver understands, in the order they are asked: a client's own first (it
 * may also carry the generic conventions' attributes, and knows better what they mean), the
 * generic conventions last.
 */
export const DIALECTS: readonly Dialect[] = [claudeCode, geminiCli, bullmq, messaging, genAi];

export type { Dialect } from "./dialect";
