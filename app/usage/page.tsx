import { getUsage } from "@/app/_routes/runtime";
import { usageQuery } from "@/app/api/usage/schema";
import { AutoRefresh } from "@/components/AutoRefresh";
import { TableHead } from "@/components/TableHead";
import { PRICE_TABLE } from "@/lib/model/money";
import { USAGE_AGENTS } from "@/lib/telemetry/usage/usageLines";
import { USAGE_BY } from "@/lib/telemetry/usage/usageReport";
import { AGENT_NAMES, BY_HEADINGS, USAGE_COLUMNS, usageCells, usageNote, usageTable } from "@/lib/views/usageView";

export const dynamic = "force-dynamic";

/** How often the page reads the agents' files again: a session's new calls show within seconds. */
const REFRESH_MS = 5000;

export default async function UsagePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const given = await searchParams;
  const parsed = usageQuery.safeParse(given);
  const query = parsed.success ? parsed.data : usageQuery.parse({});
  const report = await getUsage(query);
  const value = (name: string) => (typeof given[name] === "string" ? (given[name] as string) : "");
  return (
    <>
      <h1>Usage</h1>
      <AutoRefresh everyMs={REFRESH_MS} />
      <p className="muted">
        Tokens and cost of every model call in Claude Code&apos;s, Codex CLI&apos;s and Gemini CLI&apos;s own files, over their whole history (as{" "}
        <code>reqwatch usage</code> and ccusage count them). Prices: {PRICE_TABLE.name} {PRICE_TABLE.version}, published {PRICE_TABLE.publishedOn}.
      </p>
      {!parsed.success && (
        <p className="notice" role="alert">
          Not applied: {parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}.
        </p>
      )}
      <form className="filters" method="get" action="/usage" aria-label="Usage report">
        <label>
          Group by
          <select name="by" defaultValue={query.by}>
            {USAGE_BY.map((by) => (
              <option key={by} value={by}>
                {BY_HEADINGS[by]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent
          <select name="agent" defaultValue={query.agent ?? ""}>
            <option value="">All agents</option>
            {USAGE_AGENTS.map((agent) => (
              <option key={agent} value={agent}>
                {AGENT_NAMES[agent]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Since
          <input type="date" name="since" defaultValue={value("since")} />
        </label>
        <label>
          Until
          <input type="date" name="until" defaultValue={value("until")} />
        </label>
        <label>
          Time zone
          <input name="timezone" defaultValue={value("timezone")} placeholder={report.timezone} size={16} />
        </label>
        <button type="submit">Show</button>
      </form>
      {report.agents.length === 0 ? (
        <p className="notice">No agent&apos;s files are read: REQWATCH_AGENT_FILES (or the dashboard&apos;s --agent-files) is off.</p>
      ) : (
        <div className="table-scroll">
          <table className="usage" aria-label={`Usage by ${query.by}`}>
            <TableHead columns={[BY_HEADINGS[report.by], "Agents", "Models", ...USAGE_COLUMNS]} />
            <tbody>
              {usageTable(report).map((row, i) => (
                <tr key={i} className={row.agentRow ? "sub" : undefined}>
                  <th scope="row">{row.label}</th>
                  <td className="text">{row.agents}</td>
                  <td className="text">{row.models}</td>
                  {row.cells.map((cell, j) => (
                    <td key={j} className="num">
                      {cell}
                    </td>
                  ))}
                </tr>
              ))}
              {report.rows.length === 0 && (
                <tr>
                  <td colSpan={3 + USAGE_COLUMNS.length}>No model call in these files{query.since || query.until ? " between these dates" : ""}.</td>
                </tr>
              )}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Total</th>
                <td className="text">{report.agents.map((agent) => AGENT_NAMES[agent]).join(", ")}</td>
                <td></td>
                {usageCells(report.totals).map((cell, j) => (
                  <td key={j} className="num">
                    {cell}
                  </td>
                ))}
              </tr>
            </tfoot>
          </table>
        </div>
      )}
      <p className="muted">{usageNote(report)}</p>
    </>
  );
}
