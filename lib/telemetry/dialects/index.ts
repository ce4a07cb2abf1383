import { bullmq } from "./bullmq";
import { aiSdk } from "./aiSdk";
import { claudeCode } from "./claudeCode";
import { codexCli } from "./codexCli";
import type { Dialect } from "./dialect";
import { geminiCli } from "./geminiCli";
import { genAi } from "./genAi";
import { messaging } from "./messaging";
import { openInference } from "./openInference";
import { traceloop } from "./traceloop";

/**
 * The dialects the receiver understands, in the order they are asked: a client's own first (it
 * may also carry the generic conventions' attributes, and knows better what they mean), the
 * generic conventions last.
 */
export const DIALECTS: readonly Dialect[] = [claudeCode, geminiCli, codexCli, bullmq, messaging, aiSdk, openInference, traceloop, genAi];

export type { Dialect } from "./dialect";
