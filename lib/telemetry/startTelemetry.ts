import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { Redaction } from "../model/redaction";
import { startOtlpReceiver, type IngestExport, type ReceiverHandle, type ReceiverStatus } from "./otlpReceiver";
import { TELEMETRY_MAX_BYTES, type TelemetrySettings } from "./telemetrySettings";
import { AgentFileFollower } from "./agentFiles/followAgentFiles";
import type { AgentFiles } from "./agentFiles/agentFiles";
import { claudeCodeFiles } from "./agentFiles/claudeCodeFiles";
import { codexFiles } from "./agentFiles/codexFiles";
import { geminiFiles } from "./agentFiles/geminiFiles";
import { ingestExport } from "./pipeline/ingestExport";
import { agentFileCounts, type AgentFileCounts } from "./store/queries/agentFiles";
import { storeBytes } from "./store/queries/bytes";
import { storeIntake, type IntakeRow } from "./store/queries/intake";
import { storeUnmapped, UNMAPPED_PAGE, type UnmappedPage } from "./store/queries/unmapped";
import { storeUsage, type Usage } from "./store/queries/usage";
import { readTelemetryStore } from "./store/readStore";
import { setAsideStores, telemetryStoreFile } from "./store/schema";
import { TelemetryStore, type TelemetryStoreOptions } from "./store/telemetryStore";

/** How often the retention runs. */
const TRIM_EVERY_MS = 60_000;
/** The pause between slices of a trim that has more to do: the receiver and the pages get the thread between them. */
const TRIM_AGAIN_MS = 100;

export interface TelemetryStatus {
  receiver: ReceiverStatus;
  /** The process that receives into the store and reads the agents' files, when dashboards share it (lib/telemetry/sharedTelemetry.ts); null: this one, alone. */
  receivedBy: { pid: number; thisDashboard: boolean } | null;
  file: string;
  bytes: number;
  keepMs: number;
  /** Damaged stores set aside (renamed beside it) when found, newest first. */
  setAside: string[];
  intake: IntakeRow[];
  /** A page of the names no mapping knows (the first, unless asked for another), with how many there are. */
  unmapped: UnmappedPage;
  usage: Usage;
  /** Claude Code's folder whose files are read (null: off), and what was read of each agent's files. */
  claudeDir: string | null;
  /** Codex CLI's folder whose rollout files are read (null: off). */
  codexDir: string | null;
  /** Gemini CLI's folder whose files are read (null: off). */
  geminiDir: string | null;
  agentFiles: AgentFileCounts[];
}

export interface TelemetryHandle {
  /** The store's file: the dashboard shows its lifecycles as the `otel` source. */
  readonly file: string;
  /** Settles once the receiver listens, or could not (its status says why). */
  readonly ready: Promise<ReceiverStatus>;
  /** What was received; `unmappedOffset` pages through the names no mapping knows. */
  status(options?: { unmappedOffset?: number }): TelemetryStatus;
  close(): Promise<void>;
}

export interface TelemetryOptions {
  storeDir: string;
  /** The receiver's port (null: no receiver) and Claude Code's folder to follow (null: none). */
  settings: TelemetrySettings;
  redaction: Redaction;
  host?: string;
  onError?: (error: Error) => void;
}

/** What the receiver's thread is given: the options that are data (functions stay on this side). */
export type TelemetryThreadData = Omit<TelemetryOptions, "onError">;

/** The receiver's thread's script, beside the bundle this runs from (dist/); absent when the sources run directly (tests, `npm run dev`). */
const threadFile = () => path.join(/*turbopackIgnore: true*/ __dirname, "telemetryThread.cjs");

/**
 * Each export's records are garbage once kept, so the thread's young generation is kept small: a
 * burst of exports then costs the process its live data and little more (V8 grows the young
 * generation of a busy thread to many times this).
 */
const THREAD_YOUNG_GENERATION_MB = 48;
/** How long the thread has to close its receiver and its store before it is stopped. */
const CLOSE_THREAD_MS = 5000;

/**
 * The dashboard's telemetry: the store (`telemetry.db` in `storeDir`, reqwatch's own: beside the
 * index), the OTLP/HTTP receiver on loopback, and the retention every minute, on a thread of their
 * own (lib/telemetry/telemetryThread.ts) so that decoding and keeping a burst of exports never holds
 * up the pages; in this thread when there is no thread script (the sources run directly). The pages
 * read the store through their own connections.
 */
export function startTelemetry(options: TelemetryOptions): TelemetryHandle {
  const file = telemetryStoreFile(options.storeDir);
  const running = fs.existsSync(threadFile()) ? onThread(options, file) : runTelemetry(options);
  const ready = running.ready.then((status) => {
    if (status.url) console.log(`reqwatch: receiving OpenTelemetry (OTLP/HTTP) on ${status.url}`);
    else if (status.error) console.error(`reqwatch: not receiving OpenTelemetry: ${status.error}`);
    if (options.settings.claudeDir) console.log(`reqwatch: reading Claude Code's session files in ${options.settings.claudeDir}`);
    if (options.settings.codexDir) console.log(`reqwatch: reading Codex CLI's session files in ${options.settings.codexDir}`);
    if (options.settings.geminiDir) console.log(`reqwatch: reading Gemini CLI's session files in ${options.settings.geminiDir}`);
    return status;
  });
  return {
    file,
    ready,
    status: ({ unmappedOffset = 0 } = {}) => telemetryStatus(file, options.settings, running.receiver(), unmappedOffset),
    close: () => running.close(),
  };
}

/** What the store at `file` holds, with what receives into it and which agents' folders are read. */
export function telemetryStatus(
  file: string,
  settings: TelemetrySettings,
  receiver: ReceiverStatus,
  unmappedOffset = 0,
  receivedBy: TelemetryStatus["receivedBy"] = null,
): TelemetryStatus {
  return {
    receiver,
    receivedBy,
    file,
    keepMs: settings.keepMs,
    setAside: setAsideStores(file),
    claudeDir: settings.claudeDir ?? null,
    codexDir: settings.codexDir ?? null,
    geminiDir: settings.geminiDir ?? null,
    ...readTelemetryStore(
      file,
      {
        bytes: 0,
        intake: [],
        unmapped: { rows: [], total: 0, offset: 0, limit: UNMAPPED_PAGE, known: [] },
        usage: { byDayAndModel: [], bySession: [] },
        agentFiles: [],
      },
      (db) => ({
        bytes: storeBytes(db),
        intake: storeIntake(db),
        unmapped: storeUnmapped(db, { offset: unmappedOffset }),
        usage: storeUsage(db),
        agentFiles: agentFileCounts(db),
      }),
    ),
  };
}

function storeOptions(options: TelemetryOptions): TelemetryStoreOptions {
  return { keepMs: options.settings.keepMs, maxBytes: TELEMETRY_MAX_BYTES };
}

/** The store, the receiver and the retention, running. */
interface RunningTelemetry {
  readonly ready: Promise<ReceiverStatus>;
  receiver(): ReceiverStatus;
  close(): Promise<void>;
}

/** Run the store, the receiver, the reader of agents' files and the retention in this thread. */
export function runTelemetry(options: TelemetryOptions): RunningTelemetry {
  const store = new TelemetryStore(telemetryStoreFile(options.storeDir), storeOptions(options));
  let receiver: ReceiverHandle | null = null;
  let closed = false;
  const ingest: IngestExport = (signal, decoded) => ingestExport(store, options.redaction, signal, decoded);
  const { port, claudeDir } = options.settings;
  const started =
    port === null
      ? Promise.resolve(null)
      : startOtlpReceiver(ingest, { port, ...(options.host && { host: options.host }) }).then((handle) => {
          if (closed) void handle.close();
          else receiver = handle;
          return handle;
        });
  const follow = <S>(folder: string | null | undefined, agent: AgentFiles<S>) =>
    folder
      ? [
          new AgentFileFollower({
            folder,
            agent,
            store,
            redaction: options.redaction,
            keepMs: options.settings.keepMs,
            live: true,
            ...(options.onError && { onError: options.onError }),
          }),
        ]
      : [];
  // One follower an agent: each agent's module is one line here.
  const followers = [
    ...follow(claudeDir, claudeCodeFiles),
    ...follow(options.settings.codexDir, codexFiles),
    ...follow(options.settings.geminiDir, geminiFiles),
  ];
  for (const follower of followers) {
    try {
      follower.start();
    } catch (error) {
      options.onError?.(error as Error);
    }
  }
  // Every minute, and at once again while a trim says there is more (each is a short slice of work).
  let timer: NodeJS.Timeout;
  const trim = () => {
    let more = false;
    try {
      more = store.trim().more;
    } catch (error) {
      options.onError?.(error as Error);
    }
    if (!closed) timer = setTimeout(trim, more ? TRIM_AGAIN_MS : TRIM_EVERY_MS).unref();
  };
  trim();
  return {
    ready: started.then((handle) => handle?.status() ?? { url: null, error: null }),
    receiver: () => receiver?.status() ?? { url: null, error: null },
    async close() {
      closed = true;
      clearTimeout(timer);
      for (const follower of followers) await follower.close();
      await (await started)?.close();
      store.close();
    },
  };
}

/** What the receiver's thread tells: it listens (or why not), or the retention failed. */
export type TelemetryThreadMessage = { ready: ReceiverStatus } | { error: string };

/** Run them on a thread of their own (lib/telemetry/telemetryThread.ts), its store in `file`. */
function onThread(options: TelemetryOptions, file: string): RunningTelemetry {
  // Made (or found unreadable) here, before the thread starts: the pages read the store from the first moment.
  new TelemetryStore(file, storeOptions(options)).close();
  const { onError, ...data } = options;
  const worker = new Worker(/*turbopackIgnore: true*/ threadFile(), {
    workerData: data satisfies TelemetryThreadData,
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
  });
  let status: ReceiverStatus = { url: null, error: null };
  let listening!: (status: ReceiverStatus) => void;
  const ready = new Promise<ReceiverStatus>((resolve) => (listening = resolve));
  worker.on("message", (message: TelemetryThreadMessage) => {
    if ("ready" in message) listening((status = message.ready));
    else if ("error" in message) onError?.(new Error(message.error));
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.on("error", (error) => {
    status = { url: null, error: `the receiver stopped: ${error.message}` };
    console.error(`reqwatch: the OpenTelemetry receiver stopped: ${error.message}`);
    listening(status);
  });
  return {
    ready,
    receiver: () => status,
    async close() {
      worker.postMessage("close");
      // A thread that does not finish closing is stopped: the dashboard's own close never waits on it for long.
      const stop = setTimeout(() => void worker.terminate(), CLOSE_THREAD_MS);
      await exited;
      clearTimeout(stop);
    },
  };
}
