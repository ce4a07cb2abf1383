import { execFileSync } from "node:child_process";
import path from "node:path";

/** Make the production build once, when it is missing or older than the sources. */
export default function globalSetup(): void {
  execFileSync(process.execPath, [path.resolve(__dirname, "../../scripts/build-if-stale.mjs")], { stdio: "inherit" });
}
