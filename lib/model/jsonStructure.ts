/** Deeper than this, a document is refused: rewriting it (stringify, zod) would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** The index of the quote that ends the string whose opening quote is at `start`. */
function endOfString(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (text.charCodeAt(end - 1) === BACKSLASH) {
    let backslashes = 1;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) break;
    end = text.indexOf('"', end + 1);
  }
  return end;
}

function hasBackslash(text: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (text.charCodeAt(k) === BACKSLASH) return true;
  return false;
}

function sameChars(text: string, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (text.charCodeAt(a + k) !== text.charCodeAt(b + k)) return false;
  return true;
}

/**
 * The keys of one open object, as offsets into the text (no string is made for a key unless one
 * is escaped; then the object's keys are compared decoded).
 */
class ObjectKeys {
  #starts: number[] = [];
  #ends: number[] = [];
  #decoded: Set<string> | null = null;

  /** Adds the key between the quotes at `start - 1` and `end`; false if the object already had it. */
  add(text: string, start: number, end: number): boolean {
    const escaped = hasBackslash(text, start, end);
    if (escaped && !this.#decoded) this.#decoded = new Set(this.#starts.map((from, k) => text.slice(from, this.#ends[k])));
    if (this.#decoded) {
      const key = escaped ? (JSON.parse(text.slice(start - 1, end + 1)) as string) : text.slice(start, end);
      if (this.#decoded.has(key)) return false;
      this.#decoded.add(key);
      return true;
    }
    const length = end - start;
    for (let k = 0; k < this.#starts.length; k++) {
      if (this.#ends[k]! - this.#starts[k]! === length && sameChars(text, this.#starts[k]!, start, length)) return false;
    }
    this.#starts.push(start);
    this.#ends.push(end);
    return true;
  }
}

/**
 * What JSON.parse accepts but a request file must not have: a key twice in one object (parsers
 * disagree on which value wins, so the file is ambiguous) or nesting deeper than `maxDepth`.
 * `text` must be valid JSON (call it after JSON.parse). One pass, strings skipped with indexOf,
 * so it costs about what JSON.parse itself does. Returns the problem in words, or null.
 */
export function jsonStructureProblem(text: string, maxDepth = MAX_JSON_DEPTH): string | null {
  const open: (ObjectKeys | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = endOfString(text, i);
      if (expectKey) {
        if (!open[open.length - 1]!.add(text, i + 1, end)) return `duplicate key ${text.slice(i, end + 1).slice(0, 80)}`;
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (open.length >= maxDepth) return `nested more than ${maxDepth} levels deep`;
      open.push(c === OPEN_OBJECT ? new ObjectKeys() : null);
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = open[open.length - 1] != null;
    }
  }
  return null;
}

/**
 * Whether a value nests objects and arrays more than `maxDepth` deep (the value itself, when it
 * is one, is level 1): the same limit as `jsonStructureProblem`, checked on a value about to be
 * written, without serializing it. A cycle counts as too deep.
 */
export function nestedDeeperThan(value: unknown, maxDepth = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (maxDepth === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (nestedDeeperThan(child, maxDepth - 1)) return true;
  }
  return false;
}
