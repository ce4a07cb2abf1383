import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { reqwatchCommand } from "../../lib/model/shellCommand";

describe("a reqwatch command printed as a hint", () => {
  it("reads back, through a shell, as the arguments it was made from", () => {
    for (const args of [
      ["retry", "abc-123"],
      ["resume", "-x"],
      ["cancel", "it's $(rm -rf ~) `x`"],
      ["retry", "--state"],
      ["cancel", "a b\tc"],
    ]) {
      const line = reqwatchCommand(args[0]!, args.slice(1));
      const echoed = spawnSync("sh", ["-c", `printf '%s\\n' ${line.slice("reqwatch ".length)}`], { encoding: "utf8" })
        .stdout.trim()
        .split("\n");
      const expected = [args[0]!, ...(args.slice(1).some((arg) => arg.startsWith("-")) ? ["--"] : []), ...args.slice(1)];
      expect(echoed, line).toEqual(expected);
    }
    expect(reqwatchCommand("resume", ["-x"])).toBe("reqwatch resume -- -x");
    expect(reqwatchCommand("retry", ["abc-123"])).toBe("reqwatch retry abc-123");
    // Options before the `--`, where they are still options.
    expect(reqwatchCommand("update", ["-abc"], ["--state", "queued"])).toBe("reqwatch update --state queued -- -abc");
  });
});
