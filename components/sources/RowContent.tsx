import { TEXT_FIELDS } from "@/lib/model/requestFormat";
import type { SourceRequestView } from "@/lib/views/sourceRowsView";

/** A source row's texts (prompt, output, error...), each whole up to what the page shows, and how much was cut. */
export function RowContent({ view }: { view: SourceRequestView }) {
  return (
    <>
      <h2>Content</h2>
      {TEXT_FIELDS.filter((field) => typeof view.request[field] === "string").map((field) => (
        <section key={field}>
          <h3>{field}</h3>
          <pre className="text">{view.request[field]}</pre>
          {view.truncated[field] !== undefined && (
            <p className="muted">
              Shown: the first {String(view.request[field]).length.toLocaleString()} of {view.truncated[field]!.toLocaleString()} characters.
            </p>
          )}
        </section>
      ))}
    </>
  );
}
