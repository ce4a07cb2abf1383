/**
 * A model call that stopped before its answer was whole: its caller aborted it, or its stream ended
 * with no end. Unlike a call the provider refused (a 529, a 503), it may have been billed for what
 * was generated before it stopped, so saying no tokens does not make it a known $0.
 */
export const ABORTED_BY_CALLER = "aborted by the caller";
export const UNFINISHED_CALL = "ended before the model finished (aborted?)";

export function stoppedMidAnswer(error: string | undefined): boolean {
  return error !== undefined && (error.startsWith(ABORTED_BY_CALLER) || error === UNFINISHED_CALL);
}
