"use client";

import { useQuery } from "@tanstack/react-query";
import { knownValuesOptions } from "../data/queries";
import { invalid, type IdField } from "./useTypedFilters";

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
export function IdFilter({
  label,
  field,
  value,
  applied,
  onType,
  size,
  suggest,
}: {
  label: string;
  field: IdField;
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
