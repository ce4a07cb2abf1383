import fs from "node:fs";
import path from "node:path";
import type { AgentFiles } from "./agentFiles";

// Apart from the follower (./followAgentFiles.ts): the usage ledger lists the same files without loading the watcher and the export pipeline.

/** Every transcript under an agent's folder (its watched folders, as deep as each is watched). */
export function transcriptsOf(folder: string, agent: Pick<AgentFiles<unknown>, "watched" | "isTranscript">): string[] {
  const found: string[] = [];
  for (const { folder: sub, depth } of agent.watched) {
    const visit = (dir: string, level: number) => {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory() && level < depth) visit(full, level + 1);
        else if (entry.isFile() && agent.isTranscript(path.relative(folder, full).split(path.sep).join("/"))) found.push(full);
      }
    };
    visit(path.join(folder, sub), 0);
  }
  return found;
}
