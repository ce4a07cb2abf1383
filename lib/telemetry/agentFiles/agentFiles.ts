import type { LifecycleChange } from "../mapping/changes";

/**
 * One agent's own files, read as it writes them (Claude Code's transcripts; Codex's and Gemini
 * CLI's are modules of the same shape): where they are under the agent's folder, how each line
 * reads as changes to its lifecycles (pure: a line and the state the file's earlier lines left,
 * so it is tested on the agent's own captured files), and which of its runs ended mid-way. The
 * tailer (./followAgentFiles.ts) does the reading; the store keeps the changes and how far each
 * file was read.
 */
export interface AgentFiles<State> {
  /** The name the positions and the docs use: `claude-code`. */
  readonly name: string;
  /** Whether a path (relative to the agent's folder, `/`-separated) is one of its transcripts. */
  isTranscript(relative: string): boolean;
  /** The folders under the agent's folder to watch, and how deep: its transcripts' and its running sessions'. */
  readonly watched: readonly { folder: string; depth: number }[];
  /** The state before a file's first line. */
  emptyState(): State;
  /** One whole line, parsed, as changes to its lifecycles; the state the next line reads. */
  mapLine(line: unknown, state: State): { changes: LifecycleChange[]; state: State };
  /** The session a file's state is in (its runs' files name it), or null before its first line says. */
  sessionOf(state: State): string | null;
  /**
   * Its runs now (the processes its session files name), read from the agent's folder; none for an
   * agent that names none. `files`: the transcripts read, with the state each left (an agent that
   * writes no run files, Gemini CLI, finds its busy runs there).
   */
  runs?(folder: string, files?: () => readonly FileRead<State>[]): AgentRun[];
  /** A busy run whose process is gone, as a change to the turn it left open (`turn`, the file's state's). */
  endedMidTurn?(run: AgentRun, state: State, endedAt: number): LifecycleChange | null;
  /**
   * For an agent whose runs are only its live processes (Codex: those holding its file open), whether
   * a file's state leaves a turn open: such a file that no run holds ended mid-turn (its run's pid,
   * if one was seen holding it, else 0).
   */
  openTurn?(state: State): boolean;
}

/** A step read from an agent's files has a key of this form (`line:<the line's id>`, `ended:<session>:<pid>`); a received one, `log:` or `span:`. */
export const isFileStep = (key: string) => key.startsWith("line:") || key.startsWith("ended:");

/** A transcript read so far: its path, its session, the state its lines left. */
export interface FileRead<State> {
  path: string;
  session: string | null;
  state: State;
}

/** A run of an agent, as its session file says (Claude Code's `sessions/<pid>.json`). */
export interface AgentRun {
  /** Null for an agent that writes no pid (Gemini CLI) and whose process was not found: the one seen running its session, if any. */
  pid: number | null;
  session: string;
  /** The open turn it names, so a session's later runs are told apart when no pid is (Gemini CLI's prompt message). */
  turn?: string;
  /** Mid-turn (Claude Code's `busy`): a run that ends so leaves its turn open. */
  busy: boolean;
  /** Whether its process is still running; unknown where it cannot be told (another pid namespace, no /proc). */
  liveness: "alive" | "gone" | "unknown";
  /** Its last sign of life: the session file's own update time, or its modification time. */
  lastSeenAt: number;
}
