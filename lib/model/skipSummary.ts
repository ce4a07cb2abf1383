/** Requests an action left alone for one reason: the audit log's and a dry run's "skipped". */
export interface SkipSummary {
  reason: string;
  count: number;
  /** The first few ids skipped for this reason. */
  ids: string[];
}
