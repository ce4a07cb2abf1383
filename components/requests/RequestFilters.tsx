"use client";

import { useState } from "react";
import type { RequestQuery } from "@/lib/model/requestQuery";
import { STATES, type State } from "@/lib/model/states";

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

/** The table's filters (keyed on the URL's text filters by the parent, so back and forward reset them). Text fields apply on Enter or when they lose focus; the rest at once. */
export function RequestFilters({ query, onChange }: { query: RequestQuery; onChange: (next: RequestQuery) => void }) {
  const [workspace, setWorkspace] = useState(query.workspace ?? "");
  const [session, setSession] = useState(query.session ?? "");
  const [search, setSearch] = useState(query.q ?? "");
  const [custom, setCustom] = useState(false);

  const toggleState = (state: State, on: boolean) => {
    const states = on ? [...query.states, state] : query.states.filter((s) => s !== state);
    onChange({ ...query, states: STATES.filter((s) => states.includes(s)) });
  };
  const applyText = () => {
    if ((query.workspace ?? "") !== workspace.trim() || (query.session ?? "") !== session.trim() || (query.q ?? "") !== search.trim()) {
      onChange({ ...query, workspace: workspace.trim() || undefined, session: session.trim() || undefined, q: search.trim() || undefined });
    }
  };

  return (
    <form className="filters" aria-label="Filters" onSubmit={(event) => { event.preventDefault(); applyText(); }}>
      <fieldset>
        <legend>States</legend>
        {STATES.map((state) => (
          <label key={state} className="check">
            <input type="checkbox" checked={query.states.includes(state)} onChange={(event) => toggleState(state, event.target.checked)} /> {state}
          </label>
        ))}
      </fieldset>
      <label>
        Search
        <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} onBlur={applyText} placeholder="prompt, output, error" size={22} />
      </label>
      <label>
        Workspace
        <input value={workspace} onChange={(event) => setWorkspace(event.target.value)} onBlur={applyText} placeholder="any" size={12} />
      </label>
      <label>
        Session
        <input value={session} onChange={(event) => setSession(event.target.value)} onBlur={applyText} placeholder="any" size={14} />
      </label>
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
            <option key={value} value={value}>{label}</option>
          ))}
        </select>
      </label>
      {(custom || query.from || query.to) && !query.within && (
        <>
          <label>
            From
            <input type="datetime-local" value={toLocalInput(query.from)} onChange={(event) => onChange({ ...query, within: undefined, from: fromLocalInput(event.target.value) })} />
          </label>
          <label>
            To
            <input type="datetime-local" value={toLocalInput(query.to)} onChange={(event) => onChange({ ...query, within: undefined, to: fromLocalInput(event.target.value) })} />
          </label>
        </>
      )}
      <label className="check">
        <input type="checkbox" checked={query.stuck} onChange={(event) => onChange({ ...query, stuck: event.target.checked })} /> Stuck only
      </label>
      <label className="check">
        <input type="checkbox" checked={query.callback === "failed"} onChange={(event) => onChange({ ...query, callback: event.target.checked ? "failed" : undefined })} /> Callback failed
      </label>
      <label>
        Sort by
        <select value={`${query.sort}:${query.order}`} onChange={(event) => { const [sort, order] = event.target.value.split(":") as [RequestQuery["sort"], RequestQuery["order"]]; onChange({ ...query, sort, order }); }}>
          <option value="updatedAt:desc">updated, newest first</option>
          <option value="updatedAt:asc">updated, oldest first</option>
          <option value="createdAt:desc">created, newest first</option>
          <option value="createdAt:asc">created, oldest first</option>
        </select>
      </label>
      <button type="submit" hidden>Apply</button>
    </form>
  );
}
