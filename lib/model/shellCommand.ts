/** One word of a shell command line (a path, an id), single-quoted when the shell would read it otherwise. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A reqwatch command line to print as a hint a person pastes into a shell: each argument quoted as
 * needed, and `--` before the arguments when one starts with a dash (a workspace named `-x` is
 * an argument, not an option).
 */
export function reqwatchCommand(command: string, ...args: string[]): string {
  const words = args.map(shellWord);
  return ["reqwatch", command, ...(args.some((arg) => arg.startsWith("-")) ? ["--"] : []), ...words].join(" ");
}
