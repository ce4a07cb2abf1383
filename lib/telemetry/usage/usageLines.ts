import fs from "node:fs";
import path from "node:path";
import type { AgentFiles } from "../agentFiles/agentFiles";
import { claudeCodeFiles } from "../agentFiles/claudeCodeFiles";
import { codexFiles, ROLLOUT } from "../agentFiles/codexFiles";
import { geminiFiles } from "../agentFiles/geminiFiles";
import { num, obj, str, type Json } from "../agentFiles/lineFields";

/**
 * What the usage ledger takes of each agent's own files (the same files lib/telemetry/agentFiles
 * reads as lifecycles, found the same way): the model calls and their tokens, counted as ccusage
 * counts them, so the two reports agree. Each reader is pure: a parsed line and the state the file's
 * earlier lines left, to the calls it tells of. A line that cannot tell of usage is never decoded nor
 * parsed: one holding none of its reader's `marks` is passed over as bytes.
 */

export type UsageAgent = "claude-code" | "codex" | "gemini";
export const USAGE_AGENTS: readonly UsageAgent[] = ["claude-code", "codex", "gemini"];

/** One model call's usage, as its agent wrote it. */
export interface UsageCall {
  at: number;
  session: string;
  project: string;
  model: string | null;
  /** Input not read from a cache (Codex's and Gemini's input less their cached part; Claude's as written). */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Tokens counted in the total and billed as output beyond `output` (Gemini's thoughts). */
  extra: number;
  /** The cost the agent wrote (Claude Code's old `costUSD`); undefined: priced from the table. */
  agentCostUsd?: number;
  /**
   * The same call written again (Claude Code copies a session's lines into a resumed one; Gemini CLI
   * writes a message again when it changes): one call, kept by the rule `dedupe` names.
   */
  dedupe?: { key: string; keep: "larger" | "latest"; sidechain: boolean };
}

/** A copy of a call as the rule between copies sees it: where its line is, and its count. */
interface CallCopy {
  path: string;
  line: number;
  sidechain: boolean;
  total: number;
}

/**
 * Whether a copy of a call replaces the one kept. Claude Code's (`larger`): a session's own line over
 * a subagent's copy, then the fuller count (a line written while the answer streamed has fewer), then
 * the file first by its path and the line first in it, as ccusage keeps the first it reads: the report
 * is the same whichever file was read first. Gemini CLI's (`latest`): the last write of a message.
 */
export function replaces(keep: "larger" | "latest", copy: CallCopy, kept: CallCopy): boolean {
  if (keep === "latest") return true;
  if (copy.sidechain !== kept.sidechain) return kept.sidechain;
  if (copy.total !== kept.total) return copy.total > kept.total;
  return copy.path < kept.path || (copy.path === kept.path && copy.line < kept.line);
}

export const tokensOf = (call: UsageCall) => call.input + call.output + call.cacheRead + call.cacheWrite;

/** The file a reader reads: its path under the agent's folder, for what only its place says. */
interface UsageFile {
  folder: string;
  path: string;
}

interface UsageReader<State> {
  agent: UsageAgent;
  files: AgentFiles<unknown>;
  emptyState(file: UsageFile): State;
  /** What a line that may tell of usage, or of what later lines need, holds (anywhere, or at its start): any other is not read. */
  marks: { anywhere?: readonly string[]; atStart?: readonly string[] };
  readLine(line: Json, state: State): { calls: UsageCall[]; state: State };
  /**
   * What makes a line the same as an earlier one of its file for the calls it tells of, read without
   * parsing it (Claude Code writes an answer's usage once per block: most are written twice or more,
   * the same); a line the same as one before it is not parsed again. Undefined: parse it.
   */
  sameAs?(line: string): string | undefined;
}

const SEMVER_PREFIX = /^\d+\.\d+\.\d+/;

interface ClaudeState {
  session: string;
  project: string;
}

/**
 * Claude Code: each line with a `message.usage` (its answers, written once per content block, so
 * the same message id and request id appear several times, and again in a resumed session's copy of
 * the history). A line with a model of `<synthetic>` (an error Claude Code made up, no call) counts its
 * tokens (zero) under no model.
 */
const claudeReader: UsageReader<ClaudeState> = {
  agent: "claude-code",
  files: claudeCodeFiles as AgentFiles<unknown>,
  emptyState: (file) => {
    // projects/<project>/<session>.jsonl, or a subagent's projects/<project>/<session>/subagents/agent-<id>.jsonl.
    const parts = path.relative(file.folder, file.path).split(path.sep);
    return { session: parts.length > 3 ? parts[2]! : path.basename(file.path, ".jsonl"), project: parts[1] ?? "" };
  },
  marks: { anywhere: ['"usage":{'] },
  // Its request, and its usage's counts (written first in it): the same request with the same counts is the same call, kept once.
  sameAs(line) {
    const usage = line.indexOf('"usage":{');
    const request = line.lastIndexOf('"requestId":"');
    if (usage === -1 || request === -1) return undefined;
    return `${line.slice(request, line.indexOf('"', request + 13))}${line.slice(usage, usage + 200)}`;
  },
  readLine(o, state) {
    const message = obj(o.message);
    const usage = obj(message?.usage);
    const at = Date.parse(String(o.timestamp ?? ""));
    const input = num(usage?.input_tokens);
    const output = num(usage?.output_tokens);
    if (!usage || !Number.isFinite(at) || input === undefined || output === undefined) return { calls: [], state };
    // What ccusage refuses as not Claude Code's own line.
    if (
      (typeof o.version === "string" && !SEMVER_PREFIX.test(o.version)) ||
      o.sessionId === "" ||
      o.requestId === "" ||
      message?.id === "" ||
      message?.model === ""
    )
      return { calls: [], state };
    const model = str(message?.model);
    const session = str(o.sessionId) ?? state.session;
    const cacheCreation = obj(usage.cache_creation);
    const cacheWrite =
      num(usage.cache_creation_input_tokens) ?? (num(cacheCreation?.ephemeral_5m_input_tokens) ?? 0) + (num(cacheCreation?.ephemeral_1h_input_tokens) ?? 0);
    const messageId = str(message?.id);
    const call: UsageCall = {
      at,
      session,
      project: str(o.cwd) ?? state.project,
      model: model && model !== "<synthetic>" ? model : null,
      input,
      output,
      cacheRead: num(usage.cache_read_input_tokens) ?? 0,
      cacheWrite,
      extra: 0,
      ...(num(o.costUSD) !== undefined && { agentCostUsd: num(o.costUSD) }),
      // A message and request id name one call wherever it is copied (a resumed session's history); without a request id, within its session.
      ...(messageId && {
        dedupe: { key: `claude-code:${messageId}:${str(o.requestId) ?? `:${session}`}`, keep: "larger" as const, sidechain: o.isSidechain === true },
      }),
    };
    return { calls: [call], state };
  },
};

interface CodexUsageState {
  session: string;
  project: string;
  model: string | null;
  /** The thread's running total at the last `token_count`: a count written again with the same total is no new call. */
  totals: Record<string, number> | null;
}

const CODEX_FIELDS = ["input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"] as const;

function codexTokens(value: unknown): Record<string, number> | null {
  const o = obj(value);
  if (!o) return null;
  // A loop, not Object.fromEntries: a first report reads tens of thousands of these.
  const tokens: Record<string, number> = {};
  for (const field of CODEX_FIELDS) tokens[field] = num(o[field]) ?? 0;
  return tokens;
}

/**
 * Codex CLI: each `event_msg` `token_count` whose thread total moved (its `last_token_usage`, else
 * what the total moved by), with the model of the turn it is in (`turn_context`). Every release
 * writes these; `token_usage_record` (one a response, newer releases) tells of the same calls again.
 */
const codexReader: UsageReader<CodexUsageState> = {
  agent: "codex",
  files: codexFiles as AgentFiles<unknown>,
  emptyState: (file) => ({ session: ROLLOUT.exec(file.path)?.[1] ?? path.basename(file.path, ".jsonl"), project: "", model: null, totals: null }),
  // Codex writes each line's type first (`{"timestamp":…,"type":"event_msg","payload":{"type":"token_count"`).
  marks: { atStart: ['"type":"token_count"', '"type":"turn_context"', '"type":"session_meta"'] },
  readLine(o, before) {
    const payload = obj(o.payload);
    if (!payload) return { calls: [], state: before };
    if (o.type === "session_meta") return { calls: [], state: { ...before, project: str(payload.cwd) ?? before.project } };
    if (o.type === "turn_context") return { calls: [], state: { ...before, model: str(payload.model) ?? before.model } };
    if (o.type !== "event_msg" || payload.type !== "token_count") return { calls: [], state: before };
    const info = obj(payload.info);
    const total = codexTokens(info?.total_token_usage);
    const moved = total === null || CODEX_FIELDS.some((field) => total[field] !== before.totals?.[field]);
    const last = moved ? codexTokens(info?.last_token_usage) : null;
    const used = last ?? (total ? Object.fromEntries(CODEX_FIELDS.map((field) => [field, Math.max(0, total[field]! - (before.totals?.[field] ?? 0))])) : null);
    const state = { ...before, totals: total ?? before.totals, model: str(payload.model) ?? str(info?.model) ?? before.model };
    const at = Date.parse(String(o.timestamp ?? ""));
    if (!used || !Number.isFinite(at) || CODEX_FIELDS.slice(0, 5).every((field) => used[field] === 0)) return { calls: [], state };
    const cached = used.cached_input_tokens!;
    const call: UsageCall = {
      at,
      session: state.session,
      project: state.project,
      model: state.model,
      input: Math.max(0, used.input_tokens! - cached),
      output: used.output_tokens!,
      cacheRead: cached,
      cacheWrite: used.cache_write_input_tokens!,
      extra: 0,
    };
    return { calls: [call], state };
  },
};

interface GeminiUsageState {
  session: string;
  project: string;
  model: string | null;
}

/**
 * Gemini CLI: each `gemini` message with its `tokens`, counted once however often it is written again
 * (the latest write wins). Its `input` counts its cached part when the total says so; its thoughts
 * are billed as output and counted in the total.
 */
const geminiReader: UsageReader<GeminiUsageState> = {
  agent: "gemini",
  files: geminiFiles as AgentFiles<unknown>,
  emptyState: (file) => {
    let project = path.basename(path.dirname(path.dirname(file.path)));
    try {
      project = fs.readFileSync(path.join(path.dirname(path.dirname(file.path)), ".project_root"), "utf8").trim() || project;
    } catch {
      // No project root written: its folder's name.
    }
    return { session: path.basename(file.path, ".jsonl"), project, model: null };
  },
  // Gemini CLI writes a message's type after its id and time, and a header or `$set` with the session first.
  marks: { atStart: ['"type":"gemini"', '"sessionId"'] },
  readLine(o, before) {
    const state = { ...before, session: str(o.sessionId) ?? str(o.session_id) ?? before.session, model: str(o.model) ?? before.model };
    const tokens = obj(o.tokens);
    if (o.type !== "gemini" || !tokens) return { calls: [], state };
    const count = (...keys: string[]) => Math.max(0, Math.trunc(keys.map((key) => num(tokens[key])).find((value) => value !== undefined) ?? 0));
    const input = count("input", "prompt", "input_tokens", "prompt_tokens");
    const output = count("output", "candidates", "output_tokens", "candidates_tokens");
    const cached = count("cached", "cached_tokens");
    const thoughts = count("thoughts", "reasoning", "thoughts_tokens", "reasoning_tokens");
    const tool = count("tool", "tool_tokens");
    const total = num(tokens.total) ?? num(tokens.total_tokens);
    // The total says whether the input counted its cached part: Gemini's own does.
    const inclusive = input + output + thoughts + tool;
    const uncached = cached > 0 && total === inclusive && total !== inclusive + cached ? input - Math.min(input, cached) : input;
    const at = Date.parse(String(o.timestamp ?? o.created_at ?? ""));
    if (!state.model || !Number.isFinite(at) || uncached + tool + output + cached + thoughts === 0) return { calls: [], state };
    const id = str(o.id);
    const call: UsageCall = {
      at,
      session: state.session,
      project: state.project,
      model: state.model,
      input: uncached + tool,
      output,
      cacheRead: cached,
      cacheWrite: 0,
      extra: thoughts,
      ...(id && { dedupe: { key: `gemini:${state.session}:${id}`, keep: "latest" as const, sidechain: false } }),
    };
    return { calls: [call], state };
  },
};

export const USAGE_READERS: Record<UsageAgent, UsageReader<unknown>> = {
  "claude-code": claudeReader as UsageReader<unknown>,
  codex: codexReader as UsageReader<unknown>,
  gemini: geminiReader as UsageReader<unknown>,
};
