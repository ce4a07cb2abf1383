/**
 * Stored text as reqwatch shows it to a person's terminal or an agent: as data, never as part of
 * reqwatch's own words. A request's error holding a line break could otherwise print a line that
 * passes for reqwatch's advice, and an escape sequence could retitle, clear or recolour the terminal.
 */

/**
 * What a terminal acts on instead of showing: the C0 controls (line breaks and tabs included), DEL,
 * the C1 controls (U+009B starts a control sequence on some terminals), the Unicode line and
 * paragraph separators, and the bidirectional overrides and isolates that reorder what is shown.
 */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, less the C0 controls, which JSON escapes itself. */
const BEYOND_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const SHORT: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeOne(char: string): string {
  return SHORT[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** `text` on one line, each control character written as its escape (`\n`, `\u001b`). */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, escapeOne);
}

/** Free text quoted as data: a JSON string, the characters JSON leaves raw escaped too. */
export function quoted(text: string): string {
  return JSON.stringify(text).replace(BEYOND_JSON, escapeOne);
}

/** A name (a worker, a host) as it is when it is one plain word, else quoted. */
export function named(text: string): string {
  return /^[\w.@:/+-]{1,128}$/.test(text) ? text : quoted(text);
}

/** `JSON.stringify(value, null, indent)`, with the characters JSON leaves raw escaped: the same JSON, safe to print (0: one line). */
export function displayJson(value: unknown, indent = 2): string {
  return String(JSON.stringify(value, null, indent || undefined)).replace(BEYOND_JSON, escapeOne);
}
