import { expect } from "vitest";
import type { RequestsView } from "../../lib/views/requestsView";
import type { SourceRequestView } from "../../lib/views/sourceRowsView";
import type { aDashboard } from "./dashboard";
import { eventually } from "./processes";

export type ReceivedRow = RequestsView["items"][number];
export type TimelineItem = NonNullable<SourceRequestView["timeline"]>["items"][number];

/** A timeline's items and those nested in them, however deep. */
export const everyItem = (items: readonly TimelineItem[]): TimelineItem[] => items.flatMap((item) => [item, ...everyItem(item.children)]);

/** A lifecycle's steps as its page lists them: `name: summary`. */
export const stepLines = (view: SourceRequestView) => view.steps!.map((step) => `${step.name}: ${step.summary}`);

/**
 * The received lifecycles of a test's dashboard (its `otel` source), read through its API as a page
 * reads them: by the prompt a client was given, since a text search finds others with its words too.
 */
export function receivedTurns(dashboard: () => Awaited<ReturnType<typeof aDashboard>>) {
  async function get<T>(pathname: string): Promise<T> {
    const response = await dashboard().ask(pathname);
    expect(response.status, response.text).toBe(200);
    return response.json<T>();
  }
  /** A row's page; null when it is gone since the list was read (joined into another intake's lifecycle). */
  const viewOf = async (row: ReceivedRow) => {
    const response = await dashboard().ask(`/api/sources/otel/requests/${row.requestId}`);
    if (response.status === 404) return null;
    expect(response.status, response.text).toBe(200);
    return response.json<SourceRequestView>();
  };
  /** Every lifecycle whose prompt is `prompt`, with its own page's view. */
  async function withPrompt(prompt: string): Promise<{ row: ReceivedRow; view: SourceRequestView }[]> {
    const rows = (await get<RequestsView>(`/api/requests?source=otel&text=${encodeURIComponent(prompt)}`)).items;
    const views = await Promise.all(rows.map(viewOf));
    return rows.flatMap((row, i) => (views[i] && views[i].request.prompt === prompt ? [{ row, view: views[i] }] : []));
  }
  return {
    get,
    /** The rows of the lifecycles whose prompt is `prompt`. */
    turnsOf: async (prompt: string) => (await withPrompt(prompt)).map(({ row }) => row),
    /** The lifecycle whose prompt is `prompt` once it is in `ready` (a state, or a test of its row and page), with its own page's view. */
    turnOf: (prompt: string, ready: string | ((row: ReceivedRow, view: SourceRequestView) => boolean), timeoutMs = 30_000) =>
      eventually(
        async () => (await withPrompt(prompt)).find(({ row, view }) => (typeof ready === "string" ? row.state === ready : ready(row, view))),
        timeoutMs,
      ),
  };
}
