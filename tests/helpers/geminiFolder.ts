import fs from "node:fs";
import path from "node:path";

const FIXTURES = path.resolve(__dirname, "../fixtures/gemini-sessions");
/** Every time Gemini CLI writes (a message's `timestamp`, a tool's, `startTime`, `lastUpdated`). */
const ISO = /"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"/g;

function filesOf(folder: string): string[] {
  return (fs.readdirSync(folder, { recursive: true, encoding: "utf8" }) as string[]).filter((file) => fs.statSync(path.join(folder, file)).isFile()).sort();
}

/**
 * A Gemini folder (what ~/.gemini holds) made of recorded scenarios' files
 * (tests/fixtures/gemini-sessions/<scenario>), every time in them moved by the same amount so the
 * last is `now`. Made at `folder`; returns each scenario's session file's path.
 */
export function aGeminiFolder(folder: string, scenarios: readonly string[], now = Date.now()): { folder: string; sessions: Record<string, string> } {
  const sessions: Record<string, string> = {};
  for (const scenario of scenarios) {
    const from = path.join(FIXTURES, scenario);
    const files = filesOf(from);
    let last = 0;
    for (const file of files) for (const match of fs.readFileSync(path.join(from, file), "utf8").matchAll(ISO)) last = Math.max(last, Date.parse(match[1]!));
    const shift = now - last;
    for (const file of files) {
      const text = fs.readFileSync(path.join(from, file), "utf8").replace(ISO, (_whole, iso: string) => `"${new Date(Date.parse(iso) + shift).toISOString()}"`);
      const to = path.join(folder, file);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.writeFileSync(to, text);
      // Last written at `now` by the test's clock, not the machine's (the clock may be set ahead).
      fs.utimesSync(to, new Date(now), new Date(now));
      if (file.endsWith(".jsonl")) sessions[scenario] = to;
    }
  }
  return { folder, sessions };
}
