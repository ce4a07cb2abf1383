/** How many characters stay in view at the end of a cut id: where ids of one kind differ. */
const TAIL = 6;

/**
 * An id cut in its middle when its cell is too narrow (`sess-mx0o…4f2a`), never at its end, where
 * ids made by one program differ; the whole id is its text and its title. CSS does the cutting
 * (`.cut` in globals.css), so it follows the cell's width. A browser reads its two parts as two
 * words: the link around it carries the id as its name (`aria-label`).
 */
export function Cut({ text }: { text: string }) {
  if (text.length <= TAIL * 2) return <>{text}</>;
  return (
    <span className="cut" title={text}>
      <span className="cut-head">{text.slice(0, -TAIL)}</span>
      <span className="cut-tail">{text.slice(-TAIL)}</span>
    </span>
  );
}
