import type { RequestDetailView } from "@/lib/views/requestsView";
import { TableHead } from "../TableHead";
import { RequestDetailQuery } from "./RequestDetailQuery";
import { RequestLifecycle } from "./RequestLifecycle";
import {
  CallbackFields,
  ClaimFields,
  CorrelationFields,
  HistoryRows,
  RequestActions,
  RequestContent,
  RequestNotices,
  RequestStateBadge,
  ResponseFile,
} from "./RequestDetailSections";

/**
 * A request's page: fields, lifecycle bar, history, claims, callback, texts, raw JSON, and the
 * actions its state allows. The layout and headings render on the server; the parts the live
 * query drives are client leaves sharing that one query (RequestDetailQuery).
 */
export function RequestDetail({ id, initial }: { id: string; initial: RequestDetailView }) {
  return (
    <RequestDetailQuery id={id} initial={initial}>
      <h1>
        Request <code>{initial.request.requestId}</code> <RequestStateBadge />
      </h1>
      <RequestNotices />
      <RequestActions />

      <h2>Lifecycle</h2>
      <RequestLifecycle />

      <div className="grid2">
        <section>
          <h2>Correlation</h2>
          <CorrelationFields />
        </section>
        <section>
          <h2>Attempts and claim</h2>
          <ClaimFields />
          <h2>Callback delivery</h2>
          <CallbackFields />
        </section>
      </div>
      <ResponseFile />

      <h2>History (oldest first)</h2>
      <table aria-label="History">
        <TableHead columns={["At", "From", "To", "By", "Reason"]} />
        <HistoryRows />
      </table>

      <h2>Content</h2>
      <RequestContent />
    </RequestDetailQuery>
  );
}
