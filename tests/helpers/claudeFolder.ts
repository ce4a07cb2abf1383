import fs from "node:fs";
import path from "node:path";

const FIXTURES = path.resolve(__dirname, "../fixtures/claude-code-transcripts");
const ISO = /"timestamp":"(\d{4}-\d\d-\d\dT[^"]+)"/g;
const EPOCH_FIELDS = ["sentAtMs", "startedAt", "updatedAt", "statusUpdatedAt", "nameSince"];

/**
 * This machine and pid namespace as Claude Code names them in a session file's `pidDomain`: a
 * recorded session file is made this machine's, as a run killed here would have left it.
 */
function hereDomain(): string | null {
  try {
    return `linux:${fs.readFileSync("/etc/machine-id", "utf8").trim()}:${fs.readlinkSync("/proc/self/ns/pid")}`;
  } catch {
    return null;
  }
}

/** Every file of a recorded scenario (tests/fixtures/claude-code-transcripts/<scenario>), relative. */
function filesOf(folder: string): string[] {
  return (fs.readdirSync(folder, { recursive: true, encoding: "utf8" }) as string[]).filter((file) => fs.statSync(path.join(folder, file)).isFile()).sort();
}

/** The latest time a scenario's files say. */
function lastTime(folder: string): number {
  let last = 0;
  for (const file of filesOf(folder)) {
    for (const match of fs.readFileSync(path.join(folder, file), "utf8").matchAll(ISO)) last = Math.max(last, Date.parse(match[1]!));
  }
  return last;
}

/**
 * A Claude folder (what ~/.claude holds) made of recorded scenarios' files, every time in them
 * (each line's `timestamp`, a session file's epoch times) moved by the same amount so the last is
 * `now`: no test depends on the day they were captured. Made at `folder` (the caller removes it);
 * returns it, and each scenario's transcript's path.
 */
export function aClaudeFolder(folder: string, scenarios: readonly string[], now = Date.now()): { folder: string; transcripts: Record<string, string> } {
  const transcripts: Record<string, string> = {};
  for (const scenario of scenarios) {
    const from = path.join(FIXTURES, scenario);
    const shift = now - lastTime(from);
    for (const file of filesOf(from)) {
      if (file.endsWith(".md")) continue;
      let text = fs
        .readFileSync(path.join(from, file), "utf8")
        .replace(ISO, (_whole, iso: string) => `"timestamp":"${new Date(Date.parse(iso) + shift).toISOString()}"`);
      for (const field of EPOCH_FIELDS)
        text = text.replace(new RegExp(`"${field}":(\\d{13})`, "g"), (_whole, ms: string) => `"${field}":${Number(ms) + shift}`);
      const domain = hereDomain();
      text = text.replace(/"pidDomain":"[^"]*",?/g, domain ? `"pidDomain":"${domain}",` : "");
      const to = path.join(folder, file);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.writeFileSync(to, text);
      // Last written at `now` by the test's clock, not the machine's (the clock may be set ahead).
      fs.utimesSync(to, new Date(now), new Date(now));
      // The session's own transcript, not a subagent's beside it.
      if (file.endsWith(".jsonl") && !file.includes("subagents")) transcripts[scenario] = to;
    }
  }
  return { folder, transcripts };
}
