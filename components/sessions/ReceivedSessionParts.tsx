"use client";

import Link from "next/link";
import { formatDuration } from "@/lib/model/duration";
import { costNote, formatCost } from "@/lib/model/money";
import type { TelemetrySessionView } from "@/lib/views/telemetrySessionsView";
import { When } from "../Clock";
import { sourceRowPath } from "../sources/sourcePaths";
import { TableHead } from "../TableHead";

export const count = (n: number) => n.toLocaleString("en-US");

/** What a received session's model calls used, per model. */
export function ByModel({ rows }: { rows: TelemetrySessionView["byModel"] }) {
  return (
    <section aria-label="Cost and tokens by model">
      <h2>By model ({rows.length})</h2>
      {rows.length ? (
        <table aria-label="Cost and tokens by model">
          <TableHead columns={["Model", "Calls", "Input tokens", "Output tokens", "Cache read", "Cache write", "Cost"]} />
          <tbody>
            {rows.map((row) => (
              <tr key={row.model}>
                <td>{row.model}</td>
                {[row.calls, row.inputTokens, row.outputTokens, row.cacheReadTokens, row.cacheWriteTokens].map((value, i) => (
                  <td key={i} className="num">
                    {count(value)}
                  </td>
                ))}
                <td className="num" title={costNote(row)}>
                  {formatCost(row)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">No model call was received.</p>
      )}
    </section>
  );
}

/** The tools a received session used: how often, how many failed, how long they took. */
export function ToolsUsed({ rows }: { rows: TelemetrySessionView["tools"] }) {
  return (
    <section aria-label="Tools used">
      <h2>Tools used ({rows.length})</h2>
      {rows.length ? (
        <table aria-label="Tools used">
          <TableHead columns={["Tool", "Uses", "Failed", "Time"]} />
          <tbody>
            {rows.map((row) => (
              <tr key={row.name}>
                <td>{row.name}</td>
                <td className="num">{count(row.uses)}</td>
                <td className="num">{count(row.failed)}</td>
                <td className="num">{formatDuration(row.durationMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">No tool was used.</p>
      )}
    </section>
  );
}

/** A received session's lifecycles that ended in an error, and the error. */
export function SessionErrors({ rows }: { rows: TelemetrySessionView["errors"] }) {
  return (
    <>
      <h2>Errors ({rows.length})</h2>
      {rows.length ? (
        <table aria-label="Errors">
          <TableHead columns={["Request", "State", "When", "Error"]} />
          <tbody>
            {rows.map((row) => (
              <tr key={row.requestId}>
                <td className="id">
                  <Link prefetch={false} href={sourceRowPath("otel", row.requestId)}>
                    {row.requestId}
                  </Link>
                </td>
                <td>{row.state}</td>
                <td className="num">
                  <When at={row.at} />
                </td>
                <td style={{ whiteSpace: "normal" }}>{row.error}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">None.</p>
      )}
    </>
  );
}
