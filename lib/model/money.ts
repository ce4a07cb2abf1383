/** A cost in US dollars as the pages show it: four decimals under a cent, so a small call is not $0.00; nothing at all is $0. */
export function formatUsd(value: number): string {
  if (value === 0) return "$0";
  return `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
}
