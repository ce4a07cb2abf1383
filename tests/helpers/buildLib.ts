import { execFileSync } from "node:child_process";

/** Tests run against the current sources: rebuild dist/ (about a quarter of a second) before any test. */
export default function setup(): void {
  execFileSync(process.execPath, ["node_modules/rolldown/bin/cli.mjs", "-c", "rolldown.config.mjs"], { stdio: "pipe" });
}
