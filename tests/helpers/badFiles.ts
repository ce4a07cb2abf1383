import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * The corpus of bad request files (tests/fixtures/bad-requests/, reasons in bad-requests.expected.json),
 * plus the ones that cannot be kept in git: a 100 MB file, a directory named like a request, a
 * symlink that points outside the state directory, and a FIFO.
 */
export const BAD_FILES_CORPUS = path.join(__dirname, "../fixtures/bad-requests");
export const BAD_FILES_EXPECTED: Record<string, string> = JSON.parse(fs.readFileSync(path.join(__dirname, "../fixtures/bad-requests.expected.json"), "utf8"));
/** The good requests planted beside the bad files. */
export const GOOD_IDS = ["good-1", "good-2", "good-3"];

export function goodRequestFile(id: string, now = Date.now()): string {
  return `${JSON.stringify({ requestId: id, workspace: "corpus", state: "queued", createdAt: now, lastUpdatedAt: now })}\n`;
}

/** Fill `requests/` with the corpus, the generated bad files and the good files; returns the reason each bad file must be reported with. */
export function plantBadFiles(stateDir: string): Map<string, string> {
  const requests = path.join(stateDir, "requests");
  fs.mkdirSync(requests, { recursive: true });
  const expected = new Map(Object.entries(BAD_FILES_EXPECTED));
  for (const name of fs.readdirSync(BAD_FILES_CORPUS)) fs.copyFileSync(path.join(BAD_FILES_CORPUS, name), path.join(requests, name));
  // 100 MB (sparse: its size is what matters, and it is never read).
  fs.writeFileSync(path.join(requests, "huge.json"), "");
  fs.truncateSync(path.join(requests, "huge.json"), 100 * 1024 * 1024);
  expected.set("huge.json", "is 100.0 MB, over the 64.0 MB limit");
  fs.mkdirSync(path.join(requests, "a-directory.json"));
  expected.set("a-directory.json", "is a folder, not a regular file");
  const outside = path.join(stateDir, "..", `${path.basename(stateDir)}-outside.json`);
  fs.writeFileSync(outside, goodRequestFile("escaped"));
  fs.symlinkSync(outside, path.join(requests, "escaped.json"));
  expected.set("escaped.json", "is a symbolic link; links are not followed");
  spawnSync("mkfifo", [path.join(requests, "a-fifo.json")]);
  expected.set("a-fifo.json", "is a FIFO (a named pipe), not a regular file");
  for (const id of GOOD_IDS) fs.writeFileSync(path.join(requests, `${id}.json`), goodRequestFile(id));
  return expected;
}
