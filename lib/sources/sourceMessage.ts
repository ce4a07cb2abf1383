import type { RequestRecord } from "../model/requestFormat";

/** One message or job of another program's queue, as reqwatch sees it. */
export interface SourceMessage {
  request: RequestRecord;
  /** Why it is stuck, by its owner's own rules; null when it is not. */
  stuck: string | null;
  /** Something worth knowing that is not stuck (a failure at the retry limit, a worker that runs). */
  note: string | null;
}
