/** One word of a shell command line (a path, an id), single-quoted when the shell would read it otherwise. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A reqwatch command line to print as a hint a person pastes into a shell: its options first, then
 * its arguments, each quoted as needed, with `--` between when an argument starts with a dash (a
 * workspace named `-x` is an argument, not an option; an option after `--` would be one too).
 */
export function reqwatchCommand(command: string, args: readonly string[], options: readonly string[] = []): string {
  const dashed = args.some((arg) => arg.startsWith("-"));
  return ["reqwatch", command, ...options.map(shellWord), ...(dashed ? ["--"] : []), ...args.map(shellWord)].join(" ");
}
