import type { Ownership } from "../store/ownership";

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLine(line = ""): void {
  process.stdout.write(`${line}\n`);
}

/** After a dry run in a folder reqwatch only observes: the run itself would be refused, and how to allow it. */
export function printObservedNote(ownership: Ownership): void {
  if (ownership.access === "observed") printLine(`Note: this folder is observed read-only (${ownership.reason}): the run itself would be refused. To let reqwatch write there, ${ownership.toWrite}.`);
}

/** A plain aligned table; the last column is not padded. */
export function printTable(headers: string[], rows: string[][]): void {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd();
  printLine(line(headers));
  for (const row of rows) printLine(line(row));
}
