"use client";

import { useEffect, useState } from "react";
import type { RequestQuery } from "@/lib/model/requestQuery";
import { REQUEST_ID_PATTERN, WORKSPACE_PATTERN } from "@/lib/model/ids";

/** How long typing pauses before a text filter applies. */
const TYPING_MS = 300;

export interface TextFilters {
  workspace: string;
  session: string;
  search: string;
}

// An exact filter from a link shows as its value; what is typed becomes a prefix filter.
/** What a workspace or a session id may hold: a typed value that cannot be one is not applied, and says why. */
const VALID = { workspace: WORKSPACE_PATTERN, session: REQUEST_ID_PATTERN } as const;
export type IdField = keyof typeof VALID;
export const invalid = (field: IdField, value: string) => value.trim() !== "" && !VALID[field].test(value.trim());

const textOf = (query: RequestQuery): TextFilters => ({
  workspace: query.workspacePrefix ?? query.workspace ?? "",
  session: query.sessionPrefix ?? query.session ?? "",
  search: query.q ?? "",
});
const sameText = (a: TextFilters, b: TextFilters) => a.workspace === b.workspace && a.session === b.session && a.search === b.search;

/**
 * The text filters as typed, applied once typing pauses (or at once by `apply`), and what the URL
 * said when the inputs last followed it: a new URL (back, forward, a link) resets them.
 */
export function useTypedFilters(query: RequestQuery, onChange: (next: RequestQuery) => void) {
  const [typed, setTyped] = useState<TextFilters>(() => textOf(query));
  const [followed, setFollowed] = useState<TextFilters>(() => textOf(query));
  if (!sameText(textOf(query), followed)) {
    setFollowed(textOf(query));
    setTyped(textOf(query));
  }

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

  return { typed, followed, type, apply: () => applyText(typed) };
}
