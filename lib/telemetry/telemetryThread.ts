// The dashboard's OTLP receiver, its store and the retention on a thread of their own (bundled as
// dist/telemetryThread.cjs; lib/telemetry/startTelemetry.ts starts it): a burst of exports is
// decoded and kept here while the serving thread answers the pages, which read the store through
// connections of their own.
import { parentPort, workerData } from "node:worker_threads";
import { runTelemetry, type TelemetryThreadData, type TelemetryThreadMessage } from "./startTelemetry";

if (parentPort) {
  const port = parentPort;
  const tell = (message: TelemetryThreadMessage) => port.postMessage(message);
  const running = runTelemetry({ ...(workerData as TelemetryThreadData), onError: (error) => tell({ error: error.message }) });
  void running.ready.then((status) => tell({ ready: status }));
  port.on("message", (message: unknown) => {
    if (message !== "close") return;
    // Closed, the thread has nothing left to wait on, and ends.
    void running.close().then(() => port.close());
  });
}
