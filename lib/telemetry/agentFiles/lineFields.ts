/** Reading an agent's JSON lines: what each agent module takes of a line's fields, and how much of a text it keeps. */

/** Kept of a text (an answer, a tool's input, an error): enough to read, never a copy of the transcript. */
export const TEXT_KEPT = 2000;
/** Of a prompt: what a person reads of a pasted file is its start. */
export const PROMPT_KEPT = 10_000;
/** Of a tool's result. */
export const RESULT_KEPT = 300;

export const clip = (text: string, size: number) => (text.length > size ? `${text.slice(0, size)}…` : text);

export type Json = Record<string, unknown>;
/** The value as an object, or undefined: a line's field may be anything. The one check a small JSON file's shape uses too. */
export { jsonObject as obj } from "../../fs/readSmallJson";
export const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
export const num = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
