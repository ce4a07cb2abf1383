import { spawn } from "node:child_process";
import fs from "node:fs";

/**
 * Runs commands side by side, each to its end whatever the others do: the first with this process's
 * output, each other one into its log file (printed after the first ends, then as each ends).
 * Resolves to the exit code of the first command, in the order given, that failed (0 when none did).
 */
export async function runHalves(halves, { cwd, write = (text) => process.stdout.write(text) } = {}) {
  const exits = halves.map(({ command, args, log }) => {
    const out = log ? fs.openSync(log, "w") : null;
    const child = spawn(command, args, { cwd, stdio: out === null ? "inherit" : ["ignore", out, out] });
    return new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        if (out !== null) fs.closeSync(out);
        resolve(code ?? (signal ? 1 : 0));
      }),
    );
  });
  const codes = [];
  for (const [index, exit] of exits.entries()) {
    codes.push(await exit);
    const { name, log } = halves[index];
    if (log) write(`\n--- ${name} (exit ${codes[index]}) ---\n${fs.readFileSync(log, "utf8")}`);
  }
  write(`\n${halves.map(({ name }, index) => `${name} ${codes[index] === 0 ? "passed" : `failed (exit ${codes[index]})`}`).join(", ")}\n`);
  return codes.find((code) => code !== 0) ?? 0;
}
