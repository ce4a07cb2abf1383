import Link from "next/link";
import { TableHead } from "@/components/TableHead";
import { When } from "../Clock";
import type { UnmappedPage } from "@/lib/telemetry/store/queries/unmapped";

/** The Health page's link to a page of the unmapped names (1 is the first). */
const unmappedPagePath = (page: number) => (page <= 1 ? "/health" : `/health?unmapped=${page}`);

/**
 * What was received and shown as no lifecycle: what a dialect knew and left out on purpose (Codex's
 * inner spans, a stalled-jobs check that found none), counted per dialect; then what no dialect
 * understands, every name, a page at a time, with how many there are.
 */
export function UnmappedNames({ page }: { page: UnmappedPage }) {
  return (
    <>
      {page.known.length > 0 && (
        <table aria-label="Known, not shown">
          <caption>
            Known, not shown: records a dialect understands that tell of no lifecycle (a client&apos;s inner work, a check that found nothing), counted by
            dialect.
          </caption>
          <TableHead columns={["Dialect", "Names", "Count", "Last"]} />
          <tbody>
            {page.known.map((row) => (
              <tr key={row.dialect}>
                <td>{row.dialect}</td>
                <td className="num">{row.names.toLocaleString("en-US")}</td>
                <td className="num">{row.count.toLocaleString("en-US")}</td>
                <td className="num">
                  <When at={row.lastAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Unmapped page={page} />
    </>
  );
}

function Unmapped({ page }: { page: UnmappedPage }) {
  if (page.total === 0) return null;
  const number = Math.floor(page.offset / page.limit) + 1;
  const pages = Math.max(1, Math.ceil(page.total / page.limit));
  const first = page.offset + 1;
  const last = page.offset + page.rows.length;
  return (
    <section aria-label="Unmapped names">
      <table aria-label="Received, not shown as a lifecycle">
        <caption>
          Received, not shown as a lifecycle (no dialect understands them): counted by service and name. {page.total.toLocaleString("en-US")}{" "}
          {page.total === 1 ? "name" : "names"}
          {pages > 1 && `, ${page.rows.length ? `${first.toLocaleString("en-US")}–${last.toLocaleString("en-US")}` : "none"} shown`}.
        </caption>
        <TableHead columns={["Service", "Signal", "Name", "Count", "Last"]} />
        <tbody>
          {page.rows.map((row) => (
            <tr key={`${row.service} ${row.signal} ${row.name}`}>
              <td>{row.service}</td>
              <td>{row.signal}</td>
              <td className="id">{row.name || "(no name)"}</td>
              <td className="num">{row.count.toLocaleString("en-US")}</td>
              <td className="num">
                <When at={row.lastAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {pages > 1 && (
        <nav className="toolbar" aria-label="Unmapped names pages">
          {number > 1 ? (
            <Link href={unmappedPagePath(number - 1)} prefetch={false}>
              Previous {page.limit}
            </Link>
          ) : (
            <span className="muted">Previous {page.limit}</span>
          )}
          <span>
            Page {number} of {pages}
          </span>
          {number < pages ? (
            <Link href={unmappedPagePath(number + 1)} prefetch={false}>
              Next {page.limit}
            </Link>
          ) : (
            <span className="muted">Next {page.limit}</span>
          )}
        </nav>
      )}
    </section>
  );
}
