"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { When } from "../Clock";
import type { SourceStatus } from "@/lib/sources/liveSource";
import { workerLine } from "@/lib/views/workerLine";
import { sourcesOptions } from "../data/queries";
import { TableHead } from "../TableHead";
import { sourceTablePath } from "./sourcePaths";

function what(source: SourceStatus): string {
  if (source.kind === "otel") return "what OpenTelemetry apps sent the receiver (agents' turns and runs, model calls, jobs and messages)";
  if (source.worker) return "claude-mem's queue, which its worker keeps in memory, as reqwatch saw it";
  return source.kind === "claude-mem" ? `claude-mem's ${source.table ?? "pending_messages"}` : `table ${source.table ?? "?"}`;
}

/** Over a source's table: what it is, where it is read from, and why it cannot be read when it cannot. */
export function SourceLine({ source }: { source: SourceStatus }) {
  return (
    <p className={source.error ? "notice" : "muted"} role={source.error ? "alert" : undefined} data-testid="source-line" suppressHydrationWarning>
      {source.error
        ? `${source.name} cannot be read: ${source.error.message}`
        : source.worker
          ? `${what(source)}: ${workerLine(source.worker)}. Below its queue, the left-overs of its pending_messages in ${source.file} (schema ${source.generation}, no longer processed by claude-mem), ${source.writable ? "opened for writing" : "read only"}.`
          : `${what(source)}${source.kind === "otel" ? ", kept" : ""} in ${source.file}, ${source.writable ? "opened for writing (retry and delete where claude-mem's own recovery does the same)" : source.kind === "otel" ? "shown as sent" : "read only"}${source.generation ? `; schema ${source.generation}` : ""}${source.retired ? " (claude-mem no longer processes this table)" : ""}; last ${source.kind === "otel" ? "received" : "written"} `}
      {!source.error &&
        !source.worker &&
        (source.lastWriteAt === null ? (
          "never."
        ) : (
          <>
            <When at={source.lastWriteAt} />.
          </>
        ))}
    </p>
  );
}

/** Every source: rows, stuck, last write, or why it cannot be read (the overview and the Health page). */
export function SourcesTable({ initial, detail = false }: { initial: SourceStatus[]; detail?: boolean }) {
  const { data: sources = initial } = useQuery({ ...sourcesOptions(), initialData: initial });
  if (!sources.length) return null;
  return (
    <div className="table-scroll">
      <table aria-label="Sources">
        <TableHead columns={["Source", "Reads", "Rows", "Queued", "Processing", "Stuck", "Last written", ...(detail ? ["Last read"] : [])]} />
        <tbody>
          {sources.map((source) => (
            <tr key={source.name} className={source.error ? "stuck" : undefined}>
              <td>
                <Link href={sourceTablePath(source.name)} prefetch={false}>
                  {source.name}
                </Link>
              </td>
              <td className="text">
                {what(source)}
                {source.writable && <div className="muted">opened for writing</div>}
                {detail && source.file && (
                  <div className="muted">
                    {source.file}
                    {source.mapping ? ` (mapping ${source.mapping})` : ""}
                  </div>
                )}
                {source.worker ? (
                  <div className={source.worker.running ? "muted" : "why"} data-testid="worker-line">
                    {workerLine(source.worker)}
                  </div>
                ) : (
                  source.generation && (
                    <div className="muted">
                      schema {source.generation}
                      {source.retired ? "; no longer processed by claude-mem" : ""}
                    </div>
                  )
                )}
                {source.error && (
                  <div className="why" role="alert">
                    cannot be read: {source.error.message}
                  </div>
                )}
              </td>
              <td className="num">{source.error ? "—" : source.total}</td>
              <td className="num">{source.error ? "—" : source.counts.queued}</td>
              <td className="num">{source.error ? "—" : source.counts.processing}</td>
              <td className="num">
                {source.error ? (
                  "—"
                ) : source.stuck ? (
                  <Link href={sourceTablePath(source.name, true)} prefetch={false}>
                    {source.stuck} stuck{source.counting ? " so far" : ""}
                  </Link>
                ) : source.counting ? (
                  "counting"
                ) : (
                  0
                )}
              </td>
              <td className="num">{source.lastWriteAt === null ? "—" : <When at={source.lastWriteAt} />}</td>
              {detail && (
                <td className="num">
                  {source.readAt === null ? (
                    "—"
                  ) : (
                    <>
                      <When at={source.readAt} />, {source.readMs} ms
                    </>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** In the header: each source with stuck rows, or that cannot be read, as a badge beside the folder's stuck count. */
export function SourceBadges({ initial }: { initial: SourceStatus[] }) {
  const { data: sources = initial } = useQuery({ ...sourcesOptions(), initialData: initial });
  return (
    <>
      {sources
        .filter((source) => source.error || source.stuck > 0)
        .map((source) =>
          source.error ? (
            <Link key={source.name} prefetch={false} href="/health" className="stuck-badge alert" title={source.error.message}>
              {source.name}: cannot be read
            </Link>
          ) : (
            <Link
              key={source.name}
              prefetch={false}
              href={sourceTablePath(source.name, true)}
              className="stuck-badge alert"
              title={`${what(source)}, read only`}
            >
              {source.name}: {source.stuck} stuck{source.counting ? " so far" : ""}
            </Link>
          ),
        )}
    </>
  );
}
