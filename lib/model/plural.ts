/** A count and its noun as a person says it: "1 request", "2 requests", "1,500 calls" (digits grouped, as every page shows figures). */
export function plural(n: number, word: string): string {
  return `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
}
