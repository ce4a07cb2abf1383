import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { tempParent } from "../helpers/stateDir";

const SCRIPT = pathToFileURL(path.resolve(__dirname, "../../scripts/build-if-stale.mjs")).href;

/** What scripts/build-if-stale.mjs says of packing the checkout at `root` as it is. */
function packedBuildProblem(root: string): string | null {
  const run = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import(${JSON.stringify(SCRIPT)}).then((m) => process.stdout.write(JSON.stringify(m.packedBuildProblem(${JSON.stringify(root)}))))`,
    ],
    { encoding: "utf8" },
  );
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as string | null;
}

it("the package is packed only from a build newer than its sources; an older one is refused with the command that makes it", () => {
  const root = tempParent();
  // Times after every folder's own (they change as files are written into them).
  const T = Math.ceil(Date.now() / 1000) + 1000;
  const at = (file: string, seconds: number) => {
    const full = path.join(root, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, "");
    fs.utimesSync(full, seconds, seconds);
  };
  const bundles = ["dist/cli.cjs", "dist/index.cjs", "dist/internal.cjs", "dist/server.cjs", "dist/telemetryThread.cjs", "dist/usageReaderThread.cjs"];
  at("lib/index.ts", T);
  at("app/page.tsx", T);
  for (const output of [...bundles, "dist/index.d.ts", "dist/dashboard/.next/BUILD_ID"]) at(output, T + 10);
  expect(packedBuildProblem(root)).toBeNull();

  // A page changed since the dashboard was built.
  at("app/page.tsx", T + 20);
  expect(packedBuildProblem(root)).toBe("dist/dashboard (the prebuilt dashboard) is missing or older than its sources: run `npm run build`");
  at("dist/dashboard/.next/BUILD_ID", T + 30);
  expect(packedBuildProblem(root)).toBeNull();

  // The library changed, and only its bundles were made again (as the tests' setup does): its types are older.
  at("lib/index.ts", T + 40);
  for (const bundle of bundles) at(bundle, T + 50);
  expect(packedBuildProblem(root)).toBe("dist/ (the CLI, the library and its types) is missing or older than its sources: run `npm run build:lib`");
  fs.rmSync(path.join(root, "dist/index.d.ts"));
  expect(packedBuildProblem(root)).toMatch(/^dist\/ .* is missing/);
});
