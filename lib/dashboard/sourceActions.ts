import type { Actions } from "../actions/bulkActions";
import { ReqwatchError } from "../model/errors";
import type { LiveSource } from "../sources/liveSource";
import { sourceAction, type SourceActionInput, type SourceActionResult } from "../sources/sourceActions";
import { sourceText } from "../sources/sourceSpec";

/**
 * The dashboard's action on a source: refused unless the source was opened with `?write=1`; a dry
 * run changes nothing and is not audited; a run is audited in reqwatch's own audit log, and the
 * source is looked at again at once, so every page sees the change.
 */
export function actOnSource(source: LiveSource, actions: Pick<Actions, "recordSourceAction">, input: SourceActionInput, by: string): SourceActionResult {
  if (!source.spec.write) {
    throw new ReqwatchError(
      "FORBIDDEN",
      `${source.name} is read only: to allow retrying and deleting where claude-mem's own recovery does the same, start the dashboard with --source '${sourceText({ ...source.spec, write: true })}'.`,
    );
  }
  if (input.dryRun) return sourceAction(source.spec, input.kind, input.ids, { dryRun: true });
  const { result } = actions.recordSourceAction({ name: source.name, file: source.status().file ?? "" }, input.kind, input.ids, by, () =>
    sourceAction(source.spec, input.kind, input.ids, { dryRun: false }),
  );
  source.refresh();
  return result;
}
