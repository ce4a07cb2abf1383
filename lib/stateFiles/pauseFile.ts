import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { fsyncDir, writeFileDurable } from "../fs/durableWrite";
import { readSmallJson } from "../fs/readSmallJson";
import { assertWorkspace, WORKSPACE_PATTERN } from "../model/ids";
import { lazily } from "../model/lazily";
import type { StateDir } from "./stateDir";

/**
 * `paused/<workspace>.json`: the workspace's queue is paused. The file is the whole truth (not the
 * index), so a pause survives an index rebuild and a restart, and every process sees it at its
 * next claim.
 */
const pauseFileSchema = lazily(() =>
  z.looseObject({
    workspace: z.string(),
    pausedAt: z.number(),
    by: z.string(),
    reason: z.string().nullable().optional(),
  }),
);
/** A pause is a name, a time and a person's reason: a file this large is none. */
const MAX_PAUSE_BYTES = 1024 * 1024;

export interface Pause {
  workspace: string;
  /** Null when the file cannot be read: the workspace is still paused (its file is there), and says so. */
  pausedAt: number | null;
  by: string | null;
  reason: string | null;
}

function pausePath(dir: StateDir, workspace: string): string {
  assertWorkspace(workspace);
  return path.join(dir.pausedDir, `${workspace}.json`);
}

/** Write the workspace's pause file, durably (a pause must not come undone in a power cut). */
export function writePause(dir: StateDir, pause: { workspace: string; pausedAt: number; by: string; reason: string | null }): void {
  const file = pausePath(dir, pause.workspace);
  // A folder made now must itself survive a power cut, or the pause in it would not.
  if (fs.mkdirSync(dir.pausedDir, { recursive: true })) fsyncDir(dir.root);
  writeFileDurable(file, `${JSON.stringify(pause)}\n`);
}

/** Remove the workspace's pause file, durably; false when it was not paused. */
export function removePause(dir: StateDir, workspace: string): boolean {
  const file = pausePath(dir, workspace);
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  fsyncDir(dir.pausedDir);
  return true;
}

export function isPaused(dir: StateDir, workspace: string): boolean {
  return fs.existsSync(pausePath(dir, workspace));
}

/** The paused workspaces' names: one directory listing, cheap enough for every claim. */
export function pausedWorkspaces(dir: StateDir): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir.pausedDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  // Temp files of a write under way, and names that are no workspace, are not pauses.
  return names.filter((name) => name.endsWith(".json") && WORKSPACE_PATTERN.test(name.slice(0, -5))).map((name) => name.slice(0, -5));
}

/** The pauses with what their files say, sorted by workspace. An unreadable file still pauses its workspace. */
export function readPauses(dir: StateDir): Pause[] {
  const pauses: Pause[] = [];
  for (const workspace of pausedWorkspaces(dir).sort()) {
    const read = readSmallJson(pausePath(dir, workspace), {
      maxBytes: MAX_PAUSE_BYTES,
      links: "refuse",
      shape: (json) => pauseFileSchema().safeParse(json).data,
    });
    // Resumed since the listing: not paused.
    if ("missing" in read) continue;
    if ("value" in read) {
      pauses.push({ workspace, pausedAt: read.value.pausedAt, by: read.value.by, reason: read.value.reason ?? null });
      continue;
    }
    // A file that is there but not a pause's: what is wrong with the file itself, or that its content cannot be read.
    const why = read.reason === "empty" || read.reason === "not json" || read.reason === "wrong shape" ? "cannot be read" : read.problem;
    pauses.push({ workspace, pausedAt: null, by: null, reason: `its pause file ${why}; resume the workspace to remove it` });
  }
  return pauses;
}
