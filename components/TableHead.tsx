import type { ReactNode } from "react";

/**
 * A table's column headers, the one markup every table uses: a column is its label, text or an
 * element (a select-all box); null leaves the header cell empty. No hooks, so both server
 * and client components render it.
 */
export function TableHead({ columns }: { columns: readonly ReactNode[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column, i) => (
          <th key={i} scope="col">
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}
