import { HTTP_STATUS, isReqwatchError } from "../model/errors";

interface ErrorReply {
  status: number;
  body: { error: { code: string; message: string } };
}

/** The one place a lib error becomes an HTTP answer: a status, a code, a message. No stack, no paths. */
export function errorReply(error: unknown): ErrorReply {
  if (isReqwatchError(error)) return { status: HTTP_STATUS[error.code], body: { error: { code: error.code, message: error.message } } };
  console.error(error);
  return { status: 500, body: { error: { code: "INTERNAL", message: "Internal error; see the server log." } } };
}
