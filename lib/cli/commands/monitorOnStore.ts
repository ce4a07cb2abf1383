import { formatDuration } from "../../model/duration";
import { displayJson } from "../../model/displayText";
import { printLine } from "../output";
import { withSharedStore } from "../sharedStore";

/** One pass as the monitor prints it: when, and each request whose silent claim was taken back. */
function report(at: number, takenBack: string[], json: boolean): void {
  if (json) return void process.stdout.write(`${displayJson({ at, takenBack }, 0)}\n`);
  printLine(`${new Date(at).toISOString()}  took back ${takenBack.length} claim(s) with no heartbeat`);
  for (const requestId of takenBack) printLine(`  ${requestId}`);
}

/**
 * `reqwatch monitor` on a shared store: take back the claims whose heartbeat is older than the
 * timeout (their recorded result applied, else requeued, or timed out on the last attempt), once
 * or every interval until SIGINT or SIGTERM. The stuck rules and the retention are the local store's.
 */
export async function monitorOnStore(url: string, options: { once?: boolean; interval?: number; json?: boolean }): Promise<void> {
  await withSharedStore(url, async (store) => {
    const json = !!options.json;
    if (options.once) return report(Date.now(), await store.takeBackStaleClaims(), json);
    const every = options.interval ?? store.options.monitorIntervalMs;
    const banner = `Monitoring the shared store every ${formatDuration(every)}: claims with no heartbeat for ${formatDuration(store.options.heartbeatTimeoutMs)} are taken back; Ctrl-C to stop.`;
    if (json) process.stderr.write(`${banner}\n`);
    else printLine(banner);
    await new Promise<void>((resolve) => {
      let running = false;
      const pass = () => {
        if (running) return;
        running = true;
        store
          .takeBackStaleClaims()
          .then((takenBack) => {
            if (takenBack.length || json) report(Date.now(), takenBack, json);
          })
          .catch((error: Error) => process.stderr.write(`reqwatch: monitor pass failed: ${error.message}\n`))
          .finally(() => (running = false));
      };
      const timer = setInterval(pass, every);
      pass();
      const stop = () => {
        clearInterval(timer);
        resolve();
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
  });
}
