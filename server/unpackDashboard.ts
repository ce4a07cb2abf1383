import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { extract } from "tar";
import { defaultCacheDir } from "../lib/fs/cacheDir";

/**
 * How long an unpacked dashboard no server has started from is kept (another version's, after an
 * upgrade): long, since a dashboard left running for weeks still reads its pages from there.
 */
const UNUSED_FOR_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The installed package carries its prebuilt dashboard as one archive, `dist/dashboard.tar.gz`
 * (scripts/package.mjs): npm unpacks one file much faster than the build's 1,400 (and a tarball
 * install unpacks the package twice). The server unpacks it once per build into the cache folder
 * (`<cache>/dashboard/<hash of the archive>`) and runs it from there: unpacked beside its place and
 * renamed in whole, so a crash or a second server starting at the same moment never leaves half of
 * one. Where the cache cannot be written, a folder of this user's under the system's temp folder.
 */
export function unpackedDashboard(archive: string): string {
  const id = crypto.createHash("sha256").update(fs.readFileSync(archive)).digest("hex").slice(0, 16);
  let lastError: unknown;
  for (const parent of [path.join(defaultCacheDir(), "dashboard"), path.join(os.tmpdir(), `reqwatch-dashboard-${os.userInfo().uid}`)]) {
    try {
      return unpackInto(archive, parent, id);
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`cannot unpack the dashboard (${(lastError as Error).message})`);
}

function unpackInto(archive: string, parent: string, id: string): string {
  const target = path.join(parent, id);
  if (fs.existsSync(path.join(target, ".next", "BUILD_ID"))) {
    // Marks it as in use, for the clean-up of unused ones below.
    const now = new Date();
    fs.utimesSync(target, now, now);
    return target;
  }
  fs.mkdirSync(parent, { recursive: true });
  const staging = fs.mkdtempSync(path.join(parent, ".unpacking-"));
  try {
    extract({ file: archive, cwd: staging, strip: 1, sync: true });
    fs.renameSync(staging, target);
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    // Another server unpacked the same build first: use that one.
    if (!fs.existsSync(path.join(target, ".next", "BUILD_ID"))) throw error;
  }
  removeUnused(parent, target);
  return target;
}

/** Other builds' unpacked dashboards (an upgrade leaves the old one), and unpacking left by a crash, once unused for a month. */
function removeUnused(parent: string, keep: string): void {
  for (const name of fs.readdirSync(parent)) {
    const entry = path.join(parent, name);
    try {
      if (entry !== keep && Date.now() - fs.statSync(entry).mtimeMs > UNUSED_FOR_MS) fs.rmSync(entry, { recursive: true, force: true });
    } catch {
      // Gone already, or another user's: nothing to do.
    }
  }
}
