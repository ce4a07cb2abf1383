import { ReqwatchError } from "./errors";

const ON = ["1", "true", "yes", "on"];
const OFF = ["", "0", "false", "no", "off"];

/**
 * The one reading of an on/off setting (an environment variable, a CLI value): `1`, `true`, `yes`
 * or `on` (any case) is on; unset, empty, `0`, `false`, `no` or `off` is off; anything else is
 * refused, so a spelling reqwatch does not know never passes for off.
 */
export function parseFlag(value: string | undefined, name: string): boolean {
  const word = (value ?? "").trim().toLowerCase();
  if (ON.includes(word)) return true;
  if (OFF.includes(word)) return false;
  throw new ReqwatchError("BAD_INPUT", `Invalid ${name}: ${JSON.stringify(value)}. Use 1, true, yes or on; or 0, false, no, off or empty.`);
}

/** An on/off environment variable, read with `parseFlag`; unset or empty, `unset` (off unless a setting is on by default). */
export function flagSetting(env: NodeJS.ProcessEnv, variable: string, unset = false): boolean {
  if ((env[variable] ?? "").trim() === "") return unset;
  return parseFlag(env[variable], variable);
}
