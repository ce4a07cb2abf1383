"use client";

import { useEffect, useState } from "react";

/** The current time, updated every `everyMs`: what makes "time in state" tick. */
export function useNow(everyMs = 1000, initial?: number): number {
  const [now, setNow] = useState(() => initial ?? Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
