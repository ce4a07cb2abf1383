import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { costNote, formatCost, PRICE_TABLE } from "../../lib/model/money";
import { mergePart } from "../../lib/telemetry/mapping/fold";
import { estimateCostUsd } from "../../lib/telemetry/prices";

const call = (fields: Record<string, unknown>) => ({ kind: "call" as const, id: "req_1", at: 1, fields });

describe("a received model call's cost", () => {
  it("the price table's release is the one installed, so the date shown beside an estimate is true", () => {
    const installed = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../node_modules/@pydantic/genai-prices/package.json"), "utf8")) as {
      version: string;
    };
    expect(installed.version).toBe(PRICE_TABLE.version);
  });

  it("at list prices for the common models of Anthropic, OpenAI and Google; cache reads and writes at their own rates", () => {
    // Claude Code said $0.00162 for these tokens of claude-sonnet-4-5 ($3 in, $15 out per million).
    expect(estimateCostUsd({ model: "claude-sonnet-4-5", inputTokens: 240, outputTokens: 60 })).toBeCloseTo(0.00162, 9);
    expect(estimateCostUsd({ model: "claude-sonnet-4-5", inputTokens: 0, cacheReadTokens: 100_000, outputTokens: 0 })).toBeCloseTo(0.03, 9);
    expect(estimateCostUsd({ model: "gpt-4o-mini", inputTokens: 1_000_000, outputTokens: 0 })).toBeCloseTo(0.15, 9);
    expect(estimateCostUsd({ model: "gemini-2.5-pro", inputTokens: 0, outputTokens: 1_000_000 })).toBeCloseTo(10, 9);
    expect(estimateCostUsd({ model: "a-model-nobody-prices", inputTokens: 10, outputTokens: 10 })).toBeNull();
    expect(estimateCostUsd({ model: "claude-sonnet-4-5" })).toBeNull();
  });

  it("the client's own cost wins over an estimate, whichever record said what first", () => {
    const fromSpan = mergePart(undefined, call({ model: "claude-sonnet-4-5", inputTokens: 240, outputTokens: 60 }));
    expect(fromSpan.fields).toMatchObject({ estimatedCostUsd: 0.00162 });
    const thenLog = mergePart(fromSpan, call({ costUsd: 0.0017 }));
    expect(thenLog.fields).toMatchObject({ costUsd: 0.0017 });
    expect(thenLog.fields).not.toHaveProperty("estimatedCostUsd");
    // A failed call that said no tokens was not billed; one of a model nobody prices has no cost at all.
    expect(mergePart(undefined, call({ model: "claude-sonnet-4-5", success: false })).fields).toMatchObject({ estimatedCostUsd: 0 });
    expect(mergePart(undefined, call({ model: "a-model-nobody-prices", inputTokens: 5 })).fields).not.toHaveProperty("estimatedCostUsd");
  });

  it("is shown as said, estimated (with the table's release and date), or unknown: never $0 for what is not known", () => {
    expect(formatCost({ calls: 2, costUsd: 0.00162, estimatedCalls: 0, unpricedCalls: 0 })).toBe("$0.0016");
    expect(formatCost({ calls: 2, costUsd: 0.00162, estimatedCalls: 1, unpricedCalls: 0 })).toBe("$0.0016 estimated");
    expect(formatCost({ calls: 3, costUsd: 0.00162, estimatedCalls: 0, unpricedCalls: 1 })).toBe("$0.0016 + 1 unpriced");
    expect(formatCost({ calls: 1, costUsd: 0, estimatedCalls: 0, unpricedCalls: 1 })).toBe("unknown");
    expect(formatCost({ calls: 0, costUsd: 0, estimatedCalls: 0, unpricedCalls: 0 })).toBe("—");
    expect(costNote({ calls: 2, costUsd: 0.00162, estimatedCalls: 1, unpricedCalls: 0 })).toBe(
      `Cost as the clients said; 1 of 2 calls estimated at list prices (genai-prices ${PRICE_TABLE.version}, published ${PRICE_TABLE.publishedOn}).`,
    );
  });
});

describe("the flat rates read once from the price table", () => {
  it("price every usage as the table itself does, below and past a long-context tier, with and without cache", async () => {
    const { calcPrice } = await import("@pydantic/genai-prices");
    const models = [
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
      "claude-opus-4-1",
      "gpt-5",
      "gpt-4o-mini",
      "gpt-4.1",
      "gemini-2.5-pro",
      "gemini-2.5-flash",
      "gemini-2.0-flash",
    ];
    for (const model of models) {
      for (const [input, cacheRead, cacheWrite, output] of [
        [240, 0, 0, 60],
        [10, 5000, 0, 900],
        [10, 0, 3000, 50],
        [150_000, 60_000, 0, 2000],
        [250_000, 0, 0, 100],
        [1, 0, 0, 0],
      ]) {
        const table =
          calcPrice(
            { input_tokens: input! + cacheRead! + cacheWrite!, output_tokens: output!, cache_read_tokens: cacheRead!, cache_write_tokens: cacheWrite! },
            model,
          )?.total_price ?? null;
        const estimate = estimateCostUsd({ model, inputTokens: input, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite, outputTokens: output });
        if (table === null) expect(estimate, model).toBeNull();
        else expect(estimate, `${model} ${input}/${cacheRead}/${cacheWrite}/${output}`).toBeCloseTo(table, 9);
      }
    }
  });
});
