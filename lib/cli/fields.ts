import type { RequestFields } from "../model/requestFormat";

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
} as const satisfies Record<Exclude<keyof FieldOptions, "set">, keyof RequestFields>;

/** The fields the flags set; `--set key=json` first, so a named flag wins over it. */
export function fieldsFromOptions(options: FieldOptions): RequestFields {
  const fields: Record<string, unknown> = { ...options.set };
  for (const [flag, field] of Object.entries(FLAG_TO_FIELD)) {
    const value = options[flag as keyof typeof FLAG_TO_FIELD];
    if (value !== undefined) fields[field] = value;
  }
  return fields as RequestFields;
}
