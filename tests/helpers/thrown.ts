import { isReqwatchError } from "../../lib/model/errors";

/** The ReqwatchError `fn` throws, as its code and message; anything else it throws goes on, and no error at all fails. */
export function thrown(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    if (isReqwatchError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected an error");
}
