import fs from "node:fs";
import path from "node:path";

const FIXTURES = path.resolve(__dirname, "../fixtures/codex-sessions");
const ISO = /"timestamp":"(\d{4}-\d\d-\d\dT[^"]+)"/g;
const MS_FIELDS = ["started_at_ms", "completed_at_ms"];
const SECOND_FIELDS = ["started_at", "completed_at"];

/** Every file of a recorded scenario (tests/fixtures/codex-sessions/<scenario>), relative. */
function filesOf(folder: string): string[] {
  return (fs.readdirSync(folder, { recursive: true, encoding: "utf8" }) as string[]).filter((file) => file.endsWith(".jsonl")).sort();
}

/**
 * A Codex folder (what ~/.codex holds) made of recorded scenarios' rollout files, every time in
 * them (each line's `timestamp`, an item's `*_at_ms`, a task's `*_at` seconds) moved by the same
 * amount so the scenario's last line is at `now`. Made at `folder`; returns each scenario's file.
 */
export function aCodexFolder(folder: string, scenarios: readonly string[], now = Date.now()): { folder: string; rollouts: Record<string, string> } {
  const rollouts: Record<string, string> = {};
  for (const scenario of scenarios) {
    const from = path.join(FIXTURES, scenario);
    for (const file of filesOf(from)) {
      const original = fs.readFileSync(path.join(from, file), "utf8");
      const last = Math.max(...[...original.matchAll(ISO)].map((match) => Date.parse(match[1]!)));
      const shift = now - last;
      let text = original.replace(ISO, (_whole, iso: string) => `"timestamp":"${new Date(Date.parse(iso) + shift).toISOString()}"`);
      for (const field of MS_FIELDS) text = text.replace(new RegExp(`"${field}":(\\d{13})`, "g"), (_whole, ms: string) => `"${field}":${Number(ms) + shift}`);
      for (const field of SECOND_FIELDS)
        text = text.replace(new RegExp(`"${field}":(\\d{10})\\b`, "g"), (_whole, s: string) => `"${field}":${Number(s) + Math.round(shift / 1000)}`);
      const to = path.join(folder, file);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.writeFileSync(to, text);
      // Last written when its last line says, as Codex left it.
      fs.utimesSync(to, new Date(now), new Date(now));
      rollouts[scenario] = to;
    }
  }
  return { folder, rollouts };
}
