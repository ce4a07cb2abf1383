"use client";

import { useRouter } from "next/navigation";
import { useEffect } from "react";

/** Re-render a server page now and then (the health page: its figures are not in the event stream). */
export function AutoRefresh({ everyMs }: { everyMs: number }) {
  const router = useRouter();
  useEffect(() => {
    const timer = setInterval(() => router.refresh(), everyMs);
    return () => clearInterval(timer);
  }, [router, everyMs]);
  return null;
}
