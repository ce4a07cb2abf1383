import { calcPrice } from "@pydantic/genai-prices";
import type { PartFields } from "./mapping/changes";

// The list prices Pydantic's genai-prices ships (Anthropic's, OpenAI's, Google's and many more, per
// model, with cache and tier rates), as published in the version PRICE_TABLE names
// (lib/model/money.ts). Only the data in the package is read: it is never updated over the network.

type Usage = { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number };

/** A model's flat rates per million tokens, good below the input at which its first tier starts. */
interface Rates {
  input: number;
  output: number;
  cacheRead: number | undefined;
  cacheWrite: number | undefined;
  /** Totals of input from which a tier's price applies (long context): the table is asked then. */
  tierStart: number;
}

/**
 * Each model's flat rates, read from the table once: asking the table costs about 40 µs a call,
 * too much for a receiver taking thousands of calls a second; a usage the flat rates cannot price
 * (a tier reached, a cache rate the model lacks, prices that change by date) still asks it.
 * Null: a model the table does not know; "table": one whose every usage asks the table.
 */
const ratesByModel = new Map<string, Rates | "table" | null>();

function ratesOf(model: string, usage: Usage): Rates | "table" | null {
  let rates = ratesByModel.get(model);
  if (rates === undefined) {
    const price = calcPrice(usage, model);
    rates = !price ? null : Array.isArray(price.model.prices) ? "table" : (flatRates(price.model_price) ?? "table");
    ratesByModel.set(model, rates);
  }
  return rates;
}

function flatRates(price: Record<string, unknown>): Rates | undefined {
  let tierStart = Infinity;
  const rate = (key: string): number | undefined => {
    const value = price[key];
    if (typeof value === "number") return value;
    if (value && typeof value === "object" && typeof (value as { base?: unknown }).base === "number") {
      for (const tier of (value as { tiers?: { start: number }[] }).tiers ?? []) tierStart = Math.min(tierStart, tier.start);
      return (value as { base: number }).base;
    }
    return undefined;
  };
  const input = rate("input_mtok");
  const output = rate("output_mtok");
  if (input === undefined || output === undefined) return undefined;
  return { input, output, cacheRead: rate("cache_read_mtok"), cacheWrite: rate("cache_write_mtok"), tierStart };
}

/**
 * What a model call cost at list prices, from its model and tokens; null when the table does not
 * know the model or the call said no tokens. Input tokens here are the uncached ones (as Anthropic
 * counts them); the table wants the total, of which the cache reads and writes are parts.
 */
export function estimateCostUsd(fields: PartFields): number | null {
  if (!fields.model || (fields.inputTokens === undefined && fields.outputTokens === undefined)) return null;
  const cacheRead = fields.cacheReadTokens ?? 0;
  const cacheWrite = fields.cacheWriteTokens ?? 0;
  const usage: Usage = {
    input_tokens: (fields.inputTokens ?? 0) + cacheRead + cacheWrite,
    output_tokens: fields.outputTokens ?? 0,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
  };
  try {
    const rates = ratesOf(fields.model, usage);
    if (rates === null) return null;
    const flat =
      rates !== "table" &&
      usage.input_tokens < rates.tierStart &&
      (cacheRead === 0 || rates.cacheRead !== undefined) &&
      (cacheWrite === 0 || rates.cacheWrite !== undefined);
    const usd = flat
      ? ((fields.inputTokens ?? 0) * rates.input +
          cacheRead * (rates.cacheRead ?? 0) +
          cacheWrite * (rates.cacheWrite ?? 0) +
          usage.output_tokens * rates.output) /
        1e6
      : (calcPrice(usage, fields.model)?.total_price ?? null);
    return usd === null ? null : Math.round(usd * 1e9) / 1e9;
  } catch {
    // A usage the table's rules refuse (a cache count past the total) is not priced.
    return null;
  }
}
