import { Fragment } from "react";
import { When } from "@/components/Clock";
import { LiveStuckCount } from "@/components/header/StuckBadge";
import type { StuckSnapshot } from "@/lib/dashboard/feedEvents";
import type { Field, Part } from "@/lib/views/healthPage";

/** A value's parts in a row: words, times as the clock writes them, a file name as code, the live stuck count (from `stuck`). */
export function Parts({ value, stuck }: { value: Part[]; stuck?: StuckSnapshot }) {
  return (
    <>
      {value.map((part, i) =>
        typeof part === "string" ? (
          <Fragment key={i}>{part}</Fragment>
        ) : "at" in part ? (
          <When key={i} at={part.at} />
        ) : "code" in part ? (
          <code key={i}>{part.code}</code>
        ) : (
          <LiveStuckCount key={i} initial={stuck!} />
        ),
      )}
    </>
  );
}

/** A list of terms and their values (`stuck`: the count the live stuck figure starts from). */
export function FieldList({ fields, label, stuck }: { fields: Field[]; label?: string; stuck?: StuckSnapshot }) {
  return (
    <dl className="fields" aria-label={label}>
      {fields.map((field, i) => (
        <Fragment key={i}>
          <dt>{field.term}</dt>
          <dd aria-label={field.label}>
            <Parts value={field.value} stuck={stuck} />
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}
