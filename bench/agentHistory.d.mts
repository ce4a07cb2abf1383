/** What one model's calls in the generated history say, as the files write them (input apart from cache reads). */
export interface ModelTally {
  agent: "claude" | "codex" | "gemini";
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface AgentHistory {
  home: string;
  variant: number;
  now: string;
  bytes: number;
  files: number;
  agents: Record<"claude" | "codex" | "gemini", { sessions: number; files: number; bytes: number; calls: number }>;
  models: Record<string, ModelTally>;
  /** The transcripts last written in the hour before `now`. */
  recent: { agent: "claude" | "codex" | "gemini"; file: string }[];
}

/** Writes a history of Claude Code's, Codex CLI's and Gemini CLI's own files under `home`, the same for the same variant and `now`. */
export function writeAgentHistory(home: string, options?: { bytes?: number; variant?: number; now?: number }): AgentHistory;
