"use client";

import { useEffect, useLayoutEffect, useRef, useState } from "react";

/** The requests page's keys, as `?` lists them. */
const TABLE_KEYS: readonly (readonly [string, string])[] = [
  ["/", "search"],
  ["j / k", "next / previous row"],
  ["Enter", "open the row"],
  ["x", "select or unselect the row"],
  ["r", "retry the selected rows (or the row), after its dry run"],
  ["?", "show or hide this list"],
];

interface TableKeyActions {
  /** The rows' ids in the order shown. */
  rowIds: readonly string[];
  open: (id: string) => void;
  toggle: (id: string) => void;
  /** Whether there was anything to retry. */
  retry: (current: string | null) => boolean;
  focusSearch: () => void;
}

/** Typing into a field, Enter on a focused control (it clicks it), or a dialog open: the keys are the page's, not ours. */
function ignored(event: KeyboardEvent): boolean {
  if (event.ctrlKey || event.metaKey || event.altKey) return true;
  const target = event.target as HTMLElement | null;
  if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return true;
  if (event.key === "Enter" && target?.closest("a, button, summary, [role=button], [role=link]")) return true;
  return document.querySelector("dialog[open]") !== null;
}

/**
 * Drive the requests table from the keyboard. The current row is kept by id, so a live update that
 * moves it keeps it current; it starts at none, and j or k starts at the first row.
 */
export function useTableKeys(actions: TableKeyActions): { current: string | null; help: boolean; closeHelp: () => void } {
  const [current, setCurrent] = useState<string | null>(null);
  const [help, setHelp] = useState(false);
  // The handler reads the latest rows and actions without re-subscribing on every render. Kept in
  // step before paint (a passive effect could run after the next key, once the cursor already shows).
  const latest = useRef({ actions, current });
  useLayoutEffect(() => {
    latest.current = { actions, current };
  });

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") return setHelp(false);
      if (ignored(event)) return;
      const { actions: act, current: at } = latest.current;
      const index = at === null ? -1 : act.rowIds.indexOf(at);
      const move = (by: number) => {
        if (!act.rowIds.length) return false;
        const next = act.rowIds[index < 0 ? 0 : Math.min(act.rowIds.length - 1, Math.max(0, index + by))]!;
        // The next key acts on this row even before React renders it.
        latest.current = { ...latest.current, current: next };
        setCurrent(next);
        return true;
      };
      // Each returns whether it acted: only then is the key taken from the browser.
      const handled: Record<string, () => boolean> = {
        j: () => move(1),
        k: () => move(-1),
        Enter: () => index >= 0 && (act.open(at!), true),
        x: () => index >= 0 && (act.toggle(at!), true),
        r: () => act.retry(index >= 0 ? at : null),
        "/": () => (act.focusSearch(), true),
        "?": () => (setHelp((shown) => !shown), true),
      };
      if (handled[event.key]?.()) event.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  return { current, help, closeHelp: () => setHelp(false) };
}

/** The list `?` shows. */
export function TableKeysHelp({ onClose }: { onClose: () => void }) {
  return (
    <section className="keys-help" role="dialog" aria-label="Keyboard shortcuts">
      <h2>Keyboard</h2>
      <table>
        <tbody>
          {TABLE_KEYS.map(([key, what]) => (
            <tr key={key}>
              <th scope="row">
                <kbd>{key}</kbd>
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={onClose}>
        Close (Esc)
      </button>
    </section>
  );
}
