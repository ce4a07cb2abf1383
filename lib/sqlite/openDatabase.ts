import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { ReqwatchError } from "../model/errors";

/**
 * Every SQLite connection reqwatch opens (the index, the archive, another program's database) is
 * made here, where better-sqlite3 loads its native binding on first use: a binding that cannot load
 * is one error that says why and how to fix it, not "Cannot find module .../better_sqlite3.node".
 */
export function openDatabase(file: string, options?: Database.Options): Database.Database {
  try {
    return new Database(file, options);
  } catch (error) {
    throw bindingError(error) ?? error;
  }
}

/** Which better-sqlite3 this is, and its folder as the user would type it (relative, no home folder in a message). */
function installed(): { version: string; shown: string } {
  try {
    const folder = path.dirname(require.resolve("better-sqlite3/package.json"));
    const { version } = JSON.parse(fs.readFileSync(path.join(folder, "package.json"), "utf8")) as { version: string };
    return { version, shown: path.relative(process.cwd(), folder) || "." };
  } catch {
    return { version: "(version unknown)", shown: "node_modules/better-sqlite3" };
  }
}

/** The platforms better-sqlite3 13 carries a binary for in its package (prebuilds/; glibc and musl both, on Linux). */
const PREBUILT = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-arm64"];

function bindingError(error: unknown): ReqwatchError | undefined {
  const { code, message = "" } = error as { code?: string; message?: string };
  const notFound = code === "MODULE_NOT_FOUND" && /better_sqlite3\.node|prebuilds[\\/]/.test(message);
  if (!notFound && code !== "ERR_DLOPEN_FAILED" && !/NODE_MODULE_VERSION|did not self-register/.test(message)) return undefined;
  const { version, shown } = installed();
  const platform = `${process.platform}-${process.arch}`;
  const prebuilt = PREBUILT.includes(platform);
  // The loader's own words, without the absolute path it starts with.
  const cause = !prebuilt
    ? "it has no prebuilt binary for this platform"
    : notFound
      ? "its binary is missing"
      : `its binary does not load (${message.split("\n")[0]!.replace(/^.*\.node:\s*/, "")})`;
  const fix = prebuilt
    ? "reinstall your dependencies (rm -rf node_modules && npm install)"
    : `build one with \`npx node-gyp rebuild --release --directory ${shown}\` (it needs Python and a C++ compiler)`;
  return new ReqwatchError(
    "NO_SQLITE",
    `SQLite cannot load: better-sqlite3 ${version} on Node.js ${process.versions.node}, ${platform}: ${cause}. To fix it, ${fix}.`,
    undefined,
    { cause: error },
  );
}
