import { When } from "@/components/Clock";
import { TableHead } from "@/components/TableHead";
import type { HealthPage } from "@/lib/views/healthPage";

/** The files of the state directory that could not be read, each with why and since when. */
export function UnreadableFiles({ files }: { files: HealthPage["unreadable"] }) {
  return (
    <>
      <h2>Files that could not be read ({files.length})</h2>
      {files.length ? (
        <table aria-label="Unreadable files">
          <TableHead columns={["File", "Reason", "Since"]} />
          <tbody>
            {files.map((file) => (
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
    </>
  );
}
