/** A cost in US dollars as the pages show it: four decimals under a cent, so a small call is not $0.00. */
export function formatUsd(value: number): string {
  return `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
}
