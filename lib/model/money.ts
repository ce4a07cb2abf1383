/** A cost in US dollars as the pages show it: four decimals under a cent, so a small call is not $0.00; nothing at all is $0. */
export function formatUsd(value: number): string {
  if (value === 0) return "$0";
  return `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
}

/**
 * Where an estimated cost comes from (lib/telemetry/prices.ts): the price data of this release of
 * genai-prices, published on this day. A test checks the installed release is this one, so the
 * date shown beside an estimate stays true.
 */
export const PRICE_TABLE = { name: "genai-prices", version: "0.1.8", publishedOn: "2026-09-23" } as const;

/** What a cost marked estimated or unpriced means, in a sentence under a table of costs. */
export const ESTIMATE_NOTE = `A cost is as the client said it; "estimated" is at list prices (${PRICE_TABLE.name} ${PRICE_TABLE.version}, published ${PRICE_TABLE.publishedOn}) for calls whose client said none; "unpriced" calls are of a model that table does not know, or said no tokens.`;

/** What some model calls cost, with how it is known: the sum, and of the calls, those estimated at list prices and those with no price. */
export interface CallCosts {
  calls: number;
  costUsd: number;
  estimatedCalls: number;
  unpricedCalls: number;
}

/**
 * Model calls' cost as the pages show it, never $0 for what is not known: "$0.0016" as the clients
 * said it, "$0.0016 estimated" when any part is at list prices, "+ 2 unpriced" for calls with no
 * price, "unknown" when none has one, "—" for no call.
 */
export function formatCost(costs: CallCosts): string {
  if (costs.calls === 0) return "—";
  if (costs.unpricedCalls >= costs.calls) return "unknown";
  const usd = `${formatUsd(costs.costUsd)}${costs.estimatedCalls > 0 ? " estimated" : ""}`;
  return costs.unpricedCalls > 0 ? `${usd} + ${costs.unpricedCalls} unpriced` : usd;
}

/** What a cost shown by formatCost rests on, in a sentence (a cell's title, a note under a table). */
export function costNote(costs: CallCosts): string {
  const parts = [
    costs.calls - costs.estimatedCalls - costs.unpricedCalls > 0 && "as the clients said",
    costs.estimatedCalls > 0 &&
      `${costs.estimatedCalls} of ${costs.calls} calls estimated at list prices (${PRICE_TABLE.name} ${PRICE_TABLE.version}, published ${PRICE_TABLE.publishedOn})`,
    costs.unpricedCalls > 0 && `${costs.unpricedCalls} with no price (a model the price table does not know, or no tokens said)`,
  ].filter(Boolean);
  return parts.length ? `Cost ${parts.join("; ")}.` : "No model call.";
}
