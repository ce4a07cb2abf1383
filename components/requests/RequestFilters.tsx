"use client";

import { DEFAULT_QUERY, type RequestQuery } from "@/lib/model/requestQuery";
import type { SourceStatus } from "@/lib/sources/liveSource";
import { STATES, type State } from "@/lib/model/states";
import { CreatedFilter } from "./CreatedFilter";
import { IdFilter } from "./IdFilter";
import { useTypedFilters } from "./useTypedFilters";

/**
 * The table's filters. Text filters apply as you type (after a short pause) and match by prefix;
 * the rest at once. The URL stays the one source of the view: a filter applied is a navigation, and
 * back or forward puts the inputs back as the URL says.
 */
export function RequestFilters({
  query,
  onChange,
  sources,
}: {
  query: RequestQuery;
  onChange: (next: RequestQuery) => void;
  sources: readonly SourceStatus[];
}) {
  const { typed, followed, type, apply } = useTypedFilters(query, onChange);
  const toggleState = (state: State, on: boolean) => {
    const states = on ? [...query.states, state] : query.states.filter((s) => s !== state);
    onChange({ ...query, states: STATES.filter((s) => states.includes(s)) });
  };
  const { workspace, session, search } = typed;

  return (
    <form
      className="filters"
      aria-label="Filters"
      aria-describedby="filters-hint"
      onSubmit={(event) => {
        event.preventDefault();
        apply();
      }}
    >
      {(sources.length > 0 || query.source) && (
        <label>
          Source
          <select
            value={query.source ?? ""}
            // A source has no update time and records no callbacks: those filters do not carry over.
            onChange={(event) => onChange({ ...query, source: event.target.value || undefined, sort: DEFAULT_QUERY.sort, callback: undefined })}
          >
            <option value="">state folder</option>
            {sources.map((source) => (
              <option key={source.name} value={source.name}>
                {source.name} {source.error ? "(cannot be read)" : `(${source.total} rows, ${source.stuck} stuck)`}
              </option>
            ))}
          </select>
        </label>
      )}
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
        <input
          id="filter-search"
          type="search"
          value={search}
          onChange={(event) => type("search", event.target.value)}
          placeholder="prompt, output, error"
          size={22}
        />
      </label>
      {/* Suggestions come from the folder's index: none for a source. */}
      <IdFilter
        label="Workspace"
        field="workspace"
        value={workspace}
        applied={followed.workspace}
        onType={(value) => type("workspace", value)}
        size={12}
        suggest={!query.source}
      />
      <IdFilter
        label="Session"
        field="session"
        value={session}
        applied={followed.session}
        onType={(value) => type("session", value)}
        size={14}
        suggest={!query.source}
      />
      <CreatedFilter query={query} onChange={onChange} />
      <label className="check">
        <input type="checkbox" checked={query.stuck} onChange={(event) => onChange({ ...query, stuck: event.target.checked })} /> Stuck only
      </label>
      {!query.source && (
        <label className="check">
          <input
            type="checkbox"
            checked={query.callback === "failed"}
            onChange={(event) => onChange({ ...query, callback: event.target.checked ? "failed" : undefined })}
          />{" "}
          Callback failed
        </label>
      )}
      {query.source ? (
        // A source's rows come in its table's id order, which is the order they were created in.
        <label>
          Order
          <select value={query.order} onChange={(event) => onChange({ ...query, order: event.target.value as RequestQuery["order"] })}>
            <option value="desc">newest first</option>
            <option value="asc">oldest first</option>
          </select>
        </label>
      ) : (
        <label>
          Sort by
          <select
            value={`${query.sort}:${query.order}`}
            onChange={(event) => {
              const [sort, order] = event.target.value.split(":") as [RequestQuery["sort"], RequestQuery["order"]];
              onChange({ ...query, sort, order });
            }}
          >
            <option value="updatedAt:desc">updated, newest first</option>
            <option value="updatedAt:asc">updated, oldest first</option>
            <option value="createdAt:desc">created, newest first</option>
            <option value="createdAt:asc">created, oldest first</option>
          </select>
        </label>
      )}
      <p id="filters-hint" className="muted hint">
        Search, workspace and session apply as you type; a typed workspace or session finds every one that starts with it.
      </p>
      <button type="submit" hidden>
        Apply
      </button>
    </form>
  );
}
