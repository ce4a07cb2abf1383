import { calcPrice } from "@pydantic/genai-prices";
import type { PartFields } from "./mapping/changes";

// The list prices Pydantic's genai-prices ships (Anthropic's, OpenAI's, Google's and many more, per
// model, with cache and tier rates), as published in the version PRICE_TABLE names
// (lib/model/money.ts). Only the data in the package is read: it is never updated over the network.

/**
 * What a model call cost at list prices, from its model and tokens; null when the table does not
 * know the model or the call said no tokens. Input tokens here are the uncached ones (as Anthropic
 * counts them); the table wants the total, of which the cache reads and writes are parts.
 */
export function estimateCostUsd(fields: PartFields): number | null {
  if (!fields.model || (fields.inputTokens === undefined && fields.outputTokens === undefined)) return null;
  const cacheRead = fields.cacheReadTokens ?? 0;
  const cacheWrite = fields.cacheWriteTokens ?? 0;
  const usage = { input_tokens: (fields.inputTokens ?? 0) + cacheRead + cacheWrite, output_tokens: fields.outputTokens ?? 0, cache_read_tokens: cacheRead, cache_write_tokens: cacheWrite };
  try {
    const price = calcPrice(usage, fields.model);
    return price ? Math.round(price.total_price * 1e9) / 1e9 : null;
  } catch {
    // A usage the table's rules refuse (a cache count past the total) is not priced.
    return null;
  }
}
