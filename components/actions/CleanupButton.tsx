"use client";

import { useState } from "react";
import { parseDuration } from "@/lib/model/duration";
import { STATES, TERMINAL_STATES, type State } from "@/lib/model/states";
import { useDashboard } from "../data/LiveFeed";
import { ActionDialog } from "./ActionDialog";

const AGES = [
  ["1h", "1 hour"],
  ["24h", "24 hours"],
  ["7d", "7 days"],
] as const;

/** Cleanup by age and state (terminal states by default): a form, then the dry run and confirmation. */
export function CleanupButton() {
  const { readOnly } = useDashboard();
  const [open, setOpen] = useState(false);
  const [age, setAge] = useState<string>("24h");
  const [custom, setCustom] = useState("");
  const [states, setStates] = useState<State[]>([...TERMINAL_STATES]);
  const [confirming, setConfirming] = useState<{ olderThanMs: number; states: State[] } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const submit = () => {
    try {
      const olderThanMs = parseDuration(age === "custom" ? custom : age, "age");
      if (!states.length) throw new Error("Choose at least one state.");
      setProblem(null);
      setConfirming({ olderThanMs, states });
    } catch (error) {
      setProblem((error as Error).message);
    }
  };

  if (confirming) {
    return (
      <ActionDialog
        input={{ kind: "cleanup", ...confirming }}
        onClose={() => {
          setConfirming(null);
          setOpen(false);
        }}
      />
    );
  }
  if (!open) {
    return (
      <button type="button" disabled={readOnly !== null} title={readOnly ?? undefined} onClick={() => setOpen(true)}>
        Clean up…
      </button>
    );
  }
  return (
    <form
      className="filters cleanup-form"
      aria-label="Clean up"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label>
        Not updated for
        <select value={age} onChange={(event) => setAge(event.target.value)}>
          {AGES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
          <option value="custom">custom…</option>
        </select>
      </label>
      {age === "custom" && (
        <label>
          Custom age
          <input value={custom} onChange={(event) => setCustom(event.target.value)} placeholder="e.g. 30m, 3d" size={8} />
        </label>
      )}
      <fieldset>
        <legend>States</legend>
        {STATES.map((state) => (
          <label key={state} className="check">
            <input
              type="checkbox"
              checked={states.includes(state)}
              onChange={(event) => setStates(event.target.checked ? [...states, state] : states.filter((s) => s !== state))}
            />{" "}
            {state}
          </label>
        ))}
      </fieldset>
      <button type="submit" className="primary">
        Dry run
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {problem && (
        <span className="error-text" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}
