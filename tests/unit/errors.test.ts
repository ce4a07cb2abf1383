import { describe, expect, it, vi } from "vitest";
import { isReqwatchError, ReqwatchError } from "../../lib/model/errors";

describe("isReqwatchError", () => {
  it("recognises an error made by another copy of the module (Next bundles lib/ into several chunks)", async () => {
    vi.resetModules();
    const other = await import("../../lib/model/errors");
    expect(other.ReqwatchError).not.toBe(ReqwatchError);
    const foreign = new other.ReqwatchError("BAD_INPUT", "from the other copy");
    expect(foreign instanceof ReqwatchError).toBe(false);
    expect(isReqwatchError(foreign)).toBe(true);
    expect(isReqwatchError(foreign, "BAD_INPUT")).toBe(true);
    expect(isReqwatchError(foreign, "NOT_FOUND")).toBe(false);
  });

  it("does not mistake other errors for ours", () => {
    expect(isReqwatchError(new Error("x"))).toBe(false);
    expect(isReqwatchError({ code: "BAD_INPUT", message: "x" })).toBe(false);
    expect(isReqwatchError(null)).toBe(false);
  });
});
