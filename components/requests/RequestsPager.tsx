"use client";

/** The keyset pager: the first page, back through the cursors already passed, and on to the next one. */
export function RequestsPager({ onFirst, onPrevious, onNext }: { onFirst: (() => void) | null; onPrevious: (() => void) | null; onNext: (() => void) | null }) {
  return (
    <div className="pager">
      <button type="button" disabled={!onFirst} onClick={() => onFirst?.()}>
        First page
      </button>
      <button type="button" disabled={!onPrevious} onClick={() => onPrevious?.()}>
        Previous page
      </button>
      <button type="button" disabled={!onNext} onClick={() => onNext?.()}>
        Next page
      </button>
    </div>
  );
}
