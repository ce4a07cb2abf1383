/**
 * Runs once when the server starts: open the tracker then, so the stuck monitor and the watcher
 * run from the start, not from the first page anyone opens, and the recovery notice describes the
 * server's own start.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getTracker } = await import("./app/_server/tracker");
  try {
    getTracker();
  } catch (error) {
    // The pages report it (and retry) on the next request; the server still starts.
    console.error("reqwatch: could not open the state directory at start:", (error as Error).message);
  }
}
