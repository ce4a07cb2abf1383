import type { ResolvedListFilters } from "../model/listFilters";

/** One WHERE condition and its parameters. */
type Condition = [sql: string, ...params: unknown[]];

/**
 * How one table answers the list filters: the expressions a row shows them by, and the conditions
 * only it can say (the index's full-text search, a source's LIKE). The folder's index
 * (lib/db/queries/listRequests.ts) and other programs' queues (lib/sources/sourceQueue.ts) both
 * compile the filters here, so a filter means the same on either.
 */
export interface FilterTarget {
  workspace: string;
  /** null: the table has no sessions, so a session filter matches nothing. */
  session: string | null;
  created: string;
  /** null: the table has no update time, and the update filters are not applied. */
  updated: string | null;
  /** `expression` starts with `prefix`. */
  startsWith(expression: string, prefix: string): Condition;
  /** Words in the row's text. */
  text(text: string): Condition;
  /** The rows these request ids name. */
  ids(ids: readonly string[]): Condition;
  /** Rows whose callback delivery failed ("0": the table records none). */
  callbackFailed: string;
}

/** The conditions (ANDed) and their parameters for every filter but the states and the cursor, which each table pages its own way (`add` them). */
export function filterConditions(
  filters: ResolvedListFilters,
  target: FilterTarget,
): { where: string[]; params: unknown[]; add: (condition: string, ...values: unknown[]) => void } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filters.workspace !== undefined) add(`${target.workspace} = ?`, filters.workspace);
  if (filters.workspacePrefix !== undefined) add(...target.startsWith(target.workspace, filters.workspacePrefix));
  const { session } = target;
  if (session === null && (filters.sessionId !== undefined || filters.sessionPrefix !== undefined)) add("0");
  if (session !== null && filters.sessionId !== undefined) add(`${session} = ?`, filters.sessionId);
  if (session !== null && filters.sessionPrefix !== undefined) add(...target.startsWith(session, filters.sessionPrefix));
  if (filters.text !== undefined) add(...target.text(filters.text));
  if (filters.ids !== undefined) add(...target.ids(filters.ids));
  if (filters.callbackFailed) add(target.callbackFailed);
  if (filters.createdFrom !== undefined) add(`${target.created} >= ?`, filters.createdFrom);
  if (filters.createdTo !== undefined) add(`${target.created} < ?`, filters.createdTo);
  if (target.updated !== null && filters.updatedFrom !== undefined) add(`${target.updated} >= ?`, filters.updatedFrom);
  if (target.updated !== null && filters.updatedTo !== undefined) add(`${target.updated} < ?`, filters.updatedTo);
  return { where, params, add };
}
