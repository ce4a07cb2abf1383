import { Option } from "commander";
import type { RequestFields } from "../model/requestFormat";
import { UsageError } from "./context";
import { readTextArgument } from "./textArgument";

/** The request-field flags `create` and `update` share, as they arrive from commander. */
export interface FieldOptions {
  set?: Record<string, unknown>;
  chatId?: string;
  session?: string;
  prompt?: string;
  model?: string;
  tokens?: number;
  exitCode?: number;
  output?: string;
  error?: string;
  maxAttempts?: number;
  timeoutAt?: number;
  promptFile?: string;
  outputFile?: string;
  errorFile?: string;
}

/** The text fields that can come from a file or stdin, and their flags. */
const FROM_FILE = { promptFile: "prompt", outputFile: "output", errorFile: "error" } as const;

/** `--prompt-file` and its like, for `create` and `update`: a file, or `-` for stdin; not with `--prompt`. */
export function textFileOption(field: "prompt" | "output" | "error"): Option {
  return new Option(`--${field}-file <file>`, `the ${field} from a file, or - for stdin (text too long for a command line)`).conflicts(field);
}

const FLAG_TO_FIELD = {
  chatId: "chatId",
  session: "sessionId",
  prompt: "prompt",
  model: "model",
  tokens: "tokens",
  exitCode: "exitCode",
  output: "output",
  error: "error",
  maxAttempts: "maxAttempts",
  timeoutAt: "timeoutAt",
} as const satisfies Record<Exclude<keyof FieldOptions, "set" | keyof typeof FROM_FILE>, keyof RequestFields>;

/** The fields the flags set; `--set key=json` first, so a named flag wins over it. */
export function fieldsFromOptions(options: FieldOptions): RequestFields {
  const fields: Record<string, unknown> = { ...options.set };
  for (const [flag, field] of Object.entries(FLAG_TO_FIELD)) {
    const value = options[flag as keyof typeof FLAG_TO_FIELD];
    if (value !== undefined) fields[field] = value;
  }
  const fromStdin = Object.keys(FROM_FILE).filter((flag) => options[flag as keyof typeof FROM_FILE] === "-");
  if (fromStdin.length > 1)
    throw new UsageError(`only one of ${fromStdin.map((flag) => `--${FROM_FILE[flag as keyof typeof FROM_FILE]}-file`).join(", ")} can read stdin (-).`);
  for (const [flag, field] of Object.entries(FROM_FILE)) {
    const file = options[flag as keyof typeof FROM_FILE];
    if (file !== undefined) fields[field] = readTextArgument(file, `--${field}-file`);
  }
  return fields as RequestFields;
}
