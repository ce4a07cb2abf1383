import type { Ownership } from "../types";
import { displayJson, escapeControls } from "../model/displayText";

export function printJson(value: unknown): void {
  process.stdout.write(`${displayJson(value)}\n`);
}

/** One line, or a few a caller joined: no character from stored text in it acts on the terminal. */
export function printLine(line = ""): void {
  process.stdout.write(`${line.split("\n").map(escapeControls).join("\n")}\n`);
}

/** A line for the person beside the output a script reads: on stderr, named as every reqwatch line there is. */
export function printNote(line: string): void {
  process.stderr.write(`reqwatch: ${escapeControls(line)}\n`);
}

/** After a dry run in a folder reqwatch only observes: the run itself would be refused, and how to allow it. */
export function printObservedNote(ownership: Ownership): void {
  if (ownership.access === "observed")
    printLine(
      `Note: this folder is observed read-only (${ownership.reason}): the run itself would be refused. To let reqwatch write there, ${ownership.toWrite}.`,
    );
}

/** A plain aligned table; the last column is not padded. A cell is one line, its control characters escaped. */
export function printTable(headers: string[], unsafeRows: string[][]): void {
  const rows = unsafeRows.map((row) => row.map(escapeControls));
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  printLine(line(headers));
  for (const row of rows) printLine(line(row));
}
