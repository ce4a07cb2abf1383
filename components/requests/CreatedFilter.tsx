"use client";

import { useState } from "react";
import type { RequestQuery } from "@/lib/model/requestQuery";

const WITHIN = [
  ["", "any time"],
  ["custom", "between…"],
  ["15m", "last 15 minutes"],
  ["1h", "last hour"],
  ["24h", "last 24 hours"],
  ["7d", "last 7 days"],
] as const;

/** An ISO time as a datetime-local input's value (local time, minutes), and back. */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function fromLocalInput(value: string): string | undefined {
  return value ? new Date(value).toISOString() : undefined;
}

/** When the requests were created: a recent span, or a range between two times. */
export function CreatedFilter({ query, onChange }: { query: RequestQuery; onChange: (next: RequestQuery) => void }) {
  const [custom, setCustom] = useState(false);
  return (
    <>
      <label>
        Created
        <select
          value={query.within ?? (query.from || query.to || custom ? "custom" : "")}
          onChange={(event) => {
            const value = event.target.value;
            setCustom(value === "custom");
            if (value !== "custom") onChange({ ...query, within: value || undefined, from: undefined, to: undefined });
          }}
        >
          {WITHIN.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {(custom || query.from || query.to) && !query.within && (
        <>
          <label>
            From
            <input
              type="datetime-local"
              value={toLocalInput(query.from)}
              onChange={(event) => onChange({ ...query, within: undefined, from: fromLocalInput(event.target.value) })}
            />
          </label>
          <label>
            To
            <input
              type="datetime-local"
              value={toLocalInput(query.to)}
              onChange={(event) => onChange({ ...query, within: undefined, to: fromLocalInput(event.target.value) })}
            />
          </label>
        </>
      )}
    </>
  );
}
