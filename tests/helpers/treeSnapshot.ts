import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** One entry of a folder tree: its kind, and for a file its size, modification time and content hash. */
export interface TreeEntry {
  path: string;
  kind: "dir" | "file" | "symlink" | "other";
  mode: number;
  size?: number;
  mtimeMs?: number;
  sha256?: string;
}

/**
 * Every file and folder under `root` (root included), sorted: two snapshots are equal only if
 * nothing was created, removed, renamed, rewritten or touched.
 */
export function treeSnapshot(root: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  const visit = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const stat = fs.lstatSync(full);
      const relative = path.relative(root, full);
      if (stat.isDirectory()) {
        entries.push({ path: relative, kind: "dir", mode: stat.mode, mtimeMs: stat.mtimeMs });
        visit(full);
      } else if (stat.isFile()) {
        entries.push({
          path: relative,
          kind: "file",
          mode: stat.mode,
          size: stat.size,
          mtimeMs: stat.mtimeMs,
          sha256: createHash("sha256").update(fs.readFileSync(full)).digest("hex"),
        });
      } else {
        entries.push({ path: relative, kind: stat.isSymbolicLink() ? "symlink" : "other", mode: stat.mode });
      }
    }
  };
  entries.push({ path: ".", kind: "dir", mode: fs.statSync(root).mode, mtimeMs: fs.statSync(root).mtimeMs });
  visit(root);
  return entries;
}
