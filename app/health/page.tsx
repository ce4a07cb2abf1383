import Link from "next/link";
import { Fragment } from "react";
import { getFeedHub, getHealth, getReader, getSources } from "@/app/_routes/runtime";
import { LiveStuckCount } from "@/components/header/StuckBadge";
import { SourcesTable } from "@/components/sources/SourcesTable";
import { AutoRefresh } from "@/components/AutoRefresh";
import { TableHead } from "@/components/TableHead";
import { formatDuration } from "@/lib/model/duration";
import { When } from "@/components/Clock";
import { costNote, ESTIMATE_NOTE, formatCost } from "@/lib/model/money";
import { sessionPath } from "@/components/sessions/sessionPath";
import type { UsageSums } from "@/lib/telemetry/store/queries/callSums";
import { UNMAPPED_PAGE } from "@/lib/telemetry/store/queries/unmapped";
import { UnmappedNames } from "@/components/health/UnmappedNames";
import type { AgentFileCounts } from "@/lib/telemetry/store/queries/agentFiles";
import { healthQuery } from "./schema";
import { waitingText } from "@/lib/otel/waitingText";

export const dynamic = "force-dynamic";

const megabytes = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

/** A usage row's calls, tokens and cost. */
function UsageCells({ row }: { row: UsageSums }) {
  return (
    <>
      {[row.calls, row.inputTokens, row.outputTokens, row.cacheReadTokens, row.cacheWriteTokens].map((value, i) => (
        <td key={i} className="num">
          {value.toLocaleString("en-US")}
        </td>
      ))}
      <td className="num" title={costNote(row)}>{formatCost(row)}</td>
    </>
  );
}

export default async function HealthPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = healthQuery.parse(await searchParams);
  const reader = getReader();
  const health = getHealth({ unmappedOffset: (query.unmapped - 1) * UNMAPPED_PAGE });
  const { ingest, monitor, guard, retention } = health;
  const sources = getSources();
  return (
    <>
      <h1>Health</h1>
      <AutoRefresh everyMs={guard.problem ? 1000 : 5000} />
      {guard.problem && (
        <p className="notice" role="alert">
          {guard.problem} The tables show the requests as they were{guard.since ? <> <When at={guard.since} /></> : ""}.
        </p>
      )}
      <div className="grid2">
        <section>
          <h2>State directory and index</h2>
          <dl className="fields">
            <dt>State directory</dt>
            <dd>{health.stateDir}</dd>
            <dt>Access</dt>
            <dd>{health.access === "managed" ? `managed: ${health.accessReason}` : `observed, read-only: ${health.accessReason} (its index is kept in your cache directory)`}</dd>
            <dt>Requests indexed</dt>
            <dd>{health.requests.toLocaleString()}</dd>
            <dt>Request files</dt>
            <dd>{megabytes(health.requestFileBytes)}</dd>
            <dt>Index size</dt>
            <dd>{megabytes(health.indexBytes)}</dd>
            <dt>Archive size</dt>
            <dd>{health.access === "observed" ? "none: nothing is archived from an observed folder" : `${megabytes(health.archiveBytes)} (cleaned-up requests and the audit log)`}</dd>
            <dt>Index generation</dt>
            <dd>{health.generation}</dd>
            <dt>Index rebuilds</dt>
            <dd>
              {guard.lastRebuild
                ? <>{guard.rebuilds} while running; latest <When at={guard.lastRebuild.at} />, because {guard.lastRebuild.cause} ({guard.lastRebuild.durationMs} ms)</>
                : "none while running"}
            </dd>
          </dl>
        </section>
        <section>
          <h2>Watcher and reconciliation</h2>
          <dl className="fields">
            <dt>Watcher</dt>
            <dd>{ingest.mode === "watching" ? "watching requests/" : `not running (${ingest.watcherError ?? "unknown error"}): reconciling alone, more often`}</dd>
            <dt>Files another program wrote</dt>
            <dd>
              {ingest.watcherIngested === 0
                ? "none since this server started (reqwatch's writers index what they write; what was there before is in the index)"
                : `${ingest.watcherIngested.toLocaleString()} since this server started, indexed as the watcher reported them${ingest.lastIngestLagMs === null ? "" : `; the latest batch ${ingest.lastIngestLagMs} ms after the report`}`}
            </dd>
            <dt>Last reconciliation</dt>
            <dd>{ingest.lastReconcile ? <><When at={ingest.lastReconcile.at} />, {ingest.lastReconcile.scanned} files in {ingest.lastReconcile.durationMs} ms, {ingest.lastReconcile.fixes} fixes</> : "not yet"}</dd>
            <dt>Reconciliation fixes</dt>
            <dd>{ingest.reconcileFixes === 0 ? "0" : `${ingest.reconcileFixes}: the watcher missed changes that reconciliation caught`}</dd>
            <dt>Response files</dt>
            <dd>
              {ingest.responses.mode === "off"
                ? "no ipc folder (this server reads none)"
                : ingest.responses.mode === "waiting"
                ? "no ipc folder beside the state directory yet: followed as soon as a gateway creates it (set REQWATCH_IPC_DIR to name another)"
                : `${ingest.responses.mode === "following" ? "following" : `not watched (${ingest.responses.error ?? "error"}): reconciling`} ${health.responses.files} in the ipc folder, ${health.responses.unreadable} unreadable, ${health.responses.callbackFailed} with a failed callback`}
            </dd>
          </dl>
        </section>
        <section>
          <h2>Stuck monitor</h2>
          <dl className="fields">
            <dt>Last pass</dt>
            <dd>{monitor.lastPassAt ? <><When at={monitor.lastPassAt} /> ({monitor.durationMs?.toFixed(1)} ms)</> : "not yet"}</dd>
            <dt>Interval</dt>
            <dd>{formatDuration(monitor.intervalMs)}</dd>
            <dt>Thresholds</dt>
            <dd aria-label="Thresholds">
              queued stuck after {formatDuration(reader.options.queuedStuckAfterMs)} (REQWATCH_QUEUED_STUCK_AFTER), claimed stuck after {formatDuration(reader.options.heartbeatTimeoutMs)} without a heartbeat (REQWATCH_HEARTBEAT_TIMEOUT), processing stuck after{" "}
              {formatDuration(reader.options.processingStuckAfterMs)} with no worker holding it (REQWATCH_PROCESSING_STUCK_AFTER)
            </dd>
            <dt>Stuck</dt>
            <dd>{monitor.lastPassAt === null ? "—" : <LiveStuckCount initial={getFeedHub().stuckSnapshot} />}</dd>
            <dt>Last error</dt>
            <dd>{monitor.lastError ?? "none"}</dd>
          </dl>
          <h2>Retention</h2>
          <dl className="fields" aria-label="Retention">
            <dt>Requests</dt>
            <dd>{!retention.active ? `off: ${retention.inactiveReason}` : retention.retentionMs === null ? "kept (REQWATCH_RETENTION=off)" : `finished ones archived and removed ${formatDuration(retention.retentionMs)} after their last update, every ${formatDuration(retention.intervalMs)}`}</dd>
            {retention.active && (
              <>
                <dt>Archive</dt>
                <dd>{retention.archiveRetentionMs === null ? "kept forever (REQWATCH_ARCHIVE_RETENTION=off)" : `kept ${formatDuration(retention.archiveRetentionMs)}, with the audit log`}</dd>
                <dt>Last run</dt>
                <dd>
                  {retention.latest
                    ? <><When at={retention.latest.finishedAt} />: {retention.latest.error ? `failed: ${retention.latest.error}` : `removed ${retention.latest.removed.toLocaleString()}, skipped ${retention.latest.skipped}, archive dropped ${retention.latest.archiveDropped.toLocaleString()}`}</>
                    : "not yet"}
                </dd>
              </>
            )}
          </dl>
          <h2>OpenTelemetry export</h2>
          {health.otel ? (
            <dl className="fields" aria-label="OpenTelemetry export">
              <dt>State</dt>
              <dd>{health.otel.waitingFor ? `Waiting: ${waitingText(health.otel.waitingFor)}` : "Exporting"}</dd>
              <dt>Spans exported</dt>
              <dd>{health.otel.exported.toLocaleString()}</dd>
              <dt>Lag</dt>
              <dd>{health.otel.waitingFor ? "— (the other exporter's)" : health.otel.lagMs === 0 ? "caught up" : formatDuration(health.otel.lagMs)}</dd>
              <dt>Position</dt>
              <dd>{health.otel.position ? `change ${health.otel.position.seq}` : "not yet"}</dd>
              <dt>Last export</dt>
              <dd>{health.otel.lastSuccessAt ? <When at={health.otel.lastSuccessAt} /> : "not yet"}</dd>
              <dt>Last error</dt>
              <dd>
                {health.otel.lastError
                  ? <><When at={health.otel.lastError.at} />: {health.otel.lastError.message}{health.otel.lastSuccessAt !== null && health.otel.lastSuccessAt > health.otel.lastError.at ? " (recovered since)" : ""}</>
                  : "none"}
              </dd>
            </dl>
          ) : (
            <p className="muted">Off: start the dashboard with --otel (REQWATCH_OTEL=1) to export every lifecycle as OpenTelemetry traces, or run `reqwatch otel`.</p>
          )}
        </section>
      </div>
      <h2>Received telemetry</h2>
      {health.telemetry ? (
        <>
          {health.telemetry.setAside.length > 0 && (
            <p className="notice" role="alert">
              The telemetry store was found damaged and set aside as <code>{health.telemetry.setAside[0]}</code>
              {health.telemetry.setAside.length > 1 ? ` (and ${health.telemetry.setAside.length - 1} earlier)` : ""}; a new one was started. What was received before
              is in that copy: delete it once you no longer need it.
            </p>
          )}
          <dl className="fields" aria-label="Received telemetry">
            <dt>Receiver</dt>
            <dd>{health.telemetry.receiver.url ? `OTLP/HTTP on ${health.telemetry.receiver.url} (/v1/traces, /v1/logs, /v1/metrics)` : `not listening: ${health.telemetry.receiver.error ?? "starting, or off"}`}</dd>
            {health.telemetry.receivedBy && (
              <>
                <dt>Received by</dt>
                <dd>
                  {health.telemetry.receivedBy.thisDashboard ? `this dashboard (pid ${health.telemetry.receivedBy.pid})` : `another dashboard of yours (pid ${health.telemetry.receivedBy.pid}); this one reads the same store, and receives if that one stops`}
                </dd>
              </>
            )}
            {(
              [
                ["Claude Code", "claude-code", health.telemetry.claudeDir],
                ["Codex CLI", "codex", health.telemetry.codexDir],
                ["Gemini CLI", "gemini-cli", health.telemetry.geminiDir],
              ] as const
            ).map(([label, agent, folder]) => (
              <Fragment key={agent}>
                <dt>{label}&apos;s files</dt>
                <dd>{folder ? <AgentFilesRead row={health.telemetry!.agentFiles.find((row) => row.agent === agent)} folder={folder} /> : "not read (REQWATCH_AGENT_FILES=off)"}</dd>
              </Fragment>
            ))}
            <dt>Store</dt>
            <dd>
              {health.telemetry.file} ({megabytes(health.telemetry.bytes)}; kept {formatDuration(health.telemetry.keepMs)})
            </dd>
            {health.telemetry.intake.map((row) => (
              <Fragment key={row.signal}>
                <dt>{row.signal}</dt>
                <dd>
                  {row.records.toLocaleString()} records in {row.exports.toLocaleString()} exports{row.rejected ? `, ${row.rejected.toLocaleString()} rejected` : ""}, the last <When at={row.lastAt} />
                </dd>
              </Fragment>
            ))}
          </dl>
          {health.telemetry.usage.byDayAndModel.length > 0 && (
            <>
              <table aria-label="Tokens and cost by day and model">
                <caption>Model calls kept, by day (UTC) and model</caption>
                <TableHead columns={["Day", "Model", "Calls", "Input tokens", "Output tokens", "Cache read", "Cache write", "Cost"]} />
                <tbody>
                  {health.telemetry.usage.byDayAndModel.map((row) => (
                    <tr key={`${row.day} ${row.model}`}>
                      <td className="id">{row.day}</td>
                      <td>{row.model}</td>
                      <UsageCells row={row} />
                    </tr>
                  ))}
                </tbody>
              </table>
              <p className="muted">{ESTIMATE_NOTE}</p>
              <table aria-label="Tokens and cost by session">
                <caption>By session, the costliest {health.telemetry.usage.bySession.length}</caption>
                <TableHead columns={["Session", "Service", "Turns", "Tools", "Calls", "Input tokens", "Output tokens", "Cache read", "Cache write", "Cost", "Last"]} />
                <tbody>
                  {health.telemetry.usage.bySession.map((row) => (
                    <tr key={row.session}>
                      {/* Named as its page and the sessions list name it; the stored id, when it differs, on hover. */}
                      <td className="id" title={row.session}>
                        {row.sessionId ? (
                          <Link href={sessionPath({ sessionId: row.sessionId, source: "otel" })} prefetch={false}>
                            {row.sessionId}
                          </Link>
                        ) : (
                          row.session
                        )}
                      </td>
                      <td>{row.service}</td>
                      <td className="num">{row.turns}</td>
                      <td className="num">{row.tools}</td>
                      <UsageCells row={row} />
                      <td className="num">
                        <When at={row.lastAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <UnmappedNames page={health.telemetry.unmapped} />
        </>
      ) : (
        <p className="muted">Off (REQWATCH_OTLP_PORT=off and REQWATCH_AGENT_FILES=off): start the dashboard with --otlp-port 4318 to see Claude Code and other OpenTelemetry apps as lifecycles, or --agent-files on to read Claude Code&apos;s and Codex CLI&apos;s own files.</p>
      )}
      <h2>Files that could not be read ({health.unreadable.length})</h2>
      {health.unreadable.length ? (
        <table aria-label="Unreadable files">
          <TableHead columns={["File", "Reason", "Since"]} />
          <tbody>
            {health.unreadable.map((file) => (
              <tr key={file.file}>
                <td className="id">{file.file}</td>
                <td style={{ whiteSpace: "normal" }}>{file.reason}</td>
                <td className="num">
                  <When at={file.since} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">Every file in the state directory reads cleanly.</p>
      )}
      <p className="muted">Unreadable files are kept as they are and their last good state stays in the index; fix or remove a file and it is picked up.</p>
      <h2>Sources</h2>
      {sources.length ? (
        <>
          <SourcesTable initial={sources} detail />
          <p className="muted">Each is looked at read-only every 250 ms (one opened for writing is written only by an action you confirm, in one transaction) (a source that cannot be read is tried again every 2 s); one that fails changes nothing for the others.</p>
        </>
      ) : (
        <p className="muted">None: start the dashboard with --source claude-mem, claude-mem:&lt;path&gt; or sqlite:&lt;mapping.json&gt; to read another program&apos;s queue beside the folder.</p>
      )}
    </>
  );
}

/** What was read of one agent's own files: how many, where, what was skipped, and when last. */
function AgentFilesRead({ row, folder }: { row: AgentFileCounts | undefined; folder: string }) {
  if (!row) return <>none yet in {folder}</>;
  return (
    <>
      {`${row.files.toLocaleString()} files in ${folder}, ${row.lines.toLocaleString()} lines read${row.malformed ? `, ${row.malformed.toLocaleString()} malformed skipped` : ""}${row.oversized ? `, ${row.oversized.toLocaleString()} too long skipped` : ""}, the last `}
      <When at={row.lastReadAt} />
    </>
  );
}
