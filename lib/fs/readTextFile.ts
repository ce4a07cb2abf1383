import fs from "node:fs";

export type TextRead = { text: string; stat: fs.Stats } | { problem: string; stat: fs.Stats | null };

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${bytes} bytes`;
}

function cannotRead(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return `cannot be read (${code === "EACCES" ? "permission denied" : (code ?? "error")})`;
}

/**
 * Read a file written by someone else, as text, without following a symlink and without reading
 * one over `maxBytes`: one bad file must not take the process's memory or lead outside its
 * folder. Null when there is no file; otherwise its text, or why it cannot be read, in words.
 */
export function readTextFile(file: string, maxBytes: number): TextRead | null {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    return { problem: cannotRead(error), stat: null };
  }
  if (stat.isSymbolicLink()) return { problem: "is a symbolic link; links are not followed", stat };
  if (!stat.isFile()) return { problem: "is not a regular file", stat };
  if (stat.size > maxBytes) return { problem: `is ${formatBytes(stat.size)}, over the ${formatBytes(maxBytes)} limit`, stat };
  try {
    return { text: fs.readFileSync(file, "utf8"), stat };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    return { problem: cannotRead(error), stat };
  }
}
