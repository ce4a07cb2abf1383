"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { DEFAULT_QUERY, type RequestQuery } from "@/lib/model/requestQuery";
import type { SourceStatus } from "@/lib/sources/liveSource";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "@/lib/model/ids";
import { STATES, type State } from "@/lib/model/states";
import { knownValuesOptions } from "../data/queries";

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

/** How long typing pauses before a text filter applies. */
const TYPING_MS = 300;

interface TextFilters {
  workspace: string;
  session: string;
  search: string;
}

// An exact filter from a link shows as its value; what is typed becomes a prefix filter.
/** What a workspace or a session id may hold: a typed value that cannot be one is not applied, and says why. */
const VALID = { workspace: WORKSPACE_PATTERN, session: REQUEST_ID_PATTERN } as const;
const invalid = (field: keyof typeof VALID, value: string) => value.trim() !== "" && !VALID[field].test(value.trim());

const textOf = (query: RequestQuery): TextFilters => ({
  workspace: query.workspacePrefix ?? query.workspace ?? "",
  session: query.sessionPrefix ?? query.session ?? "",
  search: query.q ?? "",
});
const sameText = (a: TextFilters, b: TextFilters) => a.workspace === b.workspace && a.session === b.session && a.search === b.search;

/** Known workspaces or sessions that start with what was typed (once typing pauses), for the input's list. */
function Suggestions({ id, field, prefix }: { id: string; field: "workspace" | "session"; prefix: string }) {
  const { data } = useQuery(knownValuesOptions(field, prefix));
  return (
    <datalist id={id}>
      {data?.map((value) => (
        <option key={value} value={value} />
      ))}
    </datalist>
  );
}

/** A workspace or session filter: what is typed, what it may hold, and the known values that start with what was applied. */
function IdFilter({
  label,
  field,
  value,
  applied,
  onType,
  size,
  suggest,
}: {
  label: string;
  field: keyof typeof VALID;
  value: string;
  applied: string;
  onType: (value: string) => void;
  size: number;
  suggest: boolean;
}) {
  const bad = invalid(field, value);
  return (
    <label>
      {label}
      <input
        value={value}
        onChange={(event) => onType(event.target.value)}
        list={`${field}-values`}
        autoComplete="off"
        placeholder="any"
        size={size}
        aria-invalid={bad}
        aria-describedby={`${field}-invalid`}
      />
      {bad && (
        <span id={`${field}-invalid`} role="alert" className="error-text">
          letters, digits, _ or - only
        </span>
      )}
      {suggest && <Suggestions id={`${field}-values`} field={field} prefix={applied} />}
    </label>
  );
}

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
  const [typed, setTyped] = useState<TextFilters>(() => textOf(query));
  // What the URL said when the inputs last followed it; a new URL (back, forward, a link) resets them.
  const [followed, setFollowed] = useState<TextFilters>(() => textOf(query));
  if (!sameText(textOf(query), followed)) {
    setFollowed(textOf(query));
    setTyped(textOf(query));
  }
  const [custom, setCustom] = useState(false);

  const toggleState = (state: State, on: boolean) => {
    const states = on ? [...query.states, state] : query.states.filter((s) => s !== state);
    onChange({ ...query, states: STATES.filter((s) => states.includes(s)) });
  };
  const applyText = (text: TextFilters) => {
    if (invalid("workspace", text.workspace) || invalid("session", text.session)) return;
    const next = { workspace: text.workspace.trim(), session: text.session.trim(), search: text.search.trim() };
    if (sameText(next, textOf(query))) return;
    setFollowed(next);
    const current = textOf(query);
    onChange({
      ...query,
      // A filter left as the link set it stays exact; one typed matches by prefix.
      ...(next.workspace !== current.workspace && { workspace: undefined, workspacePrefix: next.workspace || undefined }),
      ...(next.session !== current.session && { session: undefined, sessionPrefix: next.session || undefined }),
      q: next.search || undefined,
    });
  };
  const type = (field: keyof TextFilters, value: string) => setTyped((current) => ({ ...current, [field]: value }));
  useEffect(() => {
    const timer = setTimeout(() => applyText(typed), TYPING_MS);
    return () => clearTimeout(timer);
    // Only typing schedules an apply; a new URL resets `typed` to what it says, which applies nothing.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [typed]);
  const { workspace, session, search } = typed;

  return (
    <form
      className="filters"
      aria-label="Filters"
      aria-describedby="filters-hint"
      onSubmit={(event) => {
        event.preventDefault();
        applyText(typed);
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
