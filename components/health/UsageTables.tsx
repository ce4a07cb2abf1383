import Link from "next/link";
import { When } from "@/components/Clock";
import { sessionPath } from "@/components/sessions/sessionPath";
import { TableHead } from "@/components/TableHead";
import { ESTIMATE_NOTE } from "@/lib/model/money";
import type { ReceivedTelemetry, UsageCells } from "@/lib/views/healthPage";

/** A usage row's calls, tokens and cost. */
function Cells({ row }: { row: UsageCells }) {
  return (
    <>
      {row.counts.map((value, i) => (
        <td key={i} className="num">
          {value}
        </td>
      ))}
      <td className="num" title={row.costNote}>
        {row.cost}
      </td>
    </>
  );
}

/** Tokens and cost of the model calls kept: by day and model, and by session (the costliest). */
export function UsageTables({ byDayAndModel, bySession }: Pick<ReceivedTelemetry, "byDayAndModel" | "bySession">) {
  return (
    <>
      <table aria-label="Tokens and cost by day and model">
        <caption>Model calls kept, by day (UTC) and model</caption>
        <TableHead columns={["Day", "Model", "Calls", "Input tokens", "Output tokens", "Cache read", "Cache write", "Cost"]} />
        <tbody>
          {byDayAndModel.map((row) => (
            <tr key={`${row.day} ${row.model}`}>
              <td className="id">{row.day}</td>
              <td>{row.model}</td>
              <Cells row={row} />
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">{ESTIMATE_NOTE}</p>
      <table aria-label="Tokens and cost by session">
        <caption>By session, the costliest {bySession.length}</caption>
        <TableHead columns={["Session", "Service", "Turns", "Tools", "Calls", "Input tokens", "Output tokens", "Cache read", "Cache write", "Cost", "Last"]} />
        <tbody>
          {bySession.map((row) => (
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
              <Cells row={row} />
              <td className="num">
                <When at={row.lastAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
