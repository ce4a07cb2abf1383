import type { Timeline as TimelineData, TimelineItem } from "@/lib/views/timelineView";
import { formatSpan } from "@/lib/views/timelineView";

/**
 * A received lifecycle on one time axis, as a trace viewer draws it: a list named "Timeline" whose
 * items are its calls, tools and steps (each named `model call, claude-sonnet-4-5, 1.2 s`), each
 * holding the list of what happened inside it; a bar as wide as it took, a tick for an instant, a
 * failure in red with its error, the slowest call or tool marked. No state: it renders on the
 * server or inside the live page alike.
 */
export function Timeline({ timeline }: { timeline: TimelineData }) {
  return (
    <section aria-labelledby="timeline-heading" className="timeline">
      <h2 id="timeline-heading">Timeline</h2>
      <p className="muted">
        {formatSpan(timeline.endAt - timeline.startAt)} from the first record to the last. Each model call and tool use is one bar, whatever number of records
        told of it; open one to see what each said.
      </p>
      <div className="timeline-axis" aria-hidden="true">
        <span />
        <span className="timeline-ticks">
          {timeline.ticks.map((tick) => (
            <span key={tick.offset} style={{ left: `${tick.offset}%` }}>
              {tick.label}
            </span>
          ))}
        </span>
        <span />
      </div>
      <ul role="list" aria-label="Timeline" className="timeline-list">
        {timeline.items.map((item) => (
          <Bar key={item.key} item={item} depth={0} origin={timeline.startAt} />
        ))}
      </ul>
    </section>
  );
}

function Bar({ item, depth, origin }: { item: TimelineItem; depth: number; origin: number }) {
  const className = ["timeline-bar", item.durationMs === null ? "instant" : "", item.error ? "failed" : "", item.slowest ? "slowest" : "", `kind-${item.kind}`]
    .filter(Boolean)
    .join(" ");
  return (
    <li aria-label={item.title}>
      <details className="timeline-row">
        <summary>
          <span className="timeline-label" style={{ paddingLeft: `${depth * 14}px` }}>
            <span className="timeline-what">{item.label}</span>
            {item.name && <span className="timeline-name"> {item.name}</span>}
            {item.role && <span className="timeline-badge">{item.role}</span>}
            {item.attempts !== null && <span className="timeline-badge attempts">{item.attempts} attempts</span>}
            {item.attemptOf !== null && <span className="timeline-badge attempts">attempt {item.attemptOf}</span>}
            {item.slowest && <span className="timeline-badge">slowest</span>}
          </span>
          <span className="timeline-track">
            <span
              role="img"
              aria-label={
                item.durationMs === null
                  ? `at +${formatSpan(item.startAt - origin)}`
                  : `${formatSpan(item.durationMs)} from +${formatSpan(item.startAt - origin)}`
              }
              className={className}
              style={{ left: `${item.offset}%`, width: item.durationMs === null ? undefined : `${item.width}%` }}
            />
          </span>
          <span className="timeline-duration">{item.durationMs === null ? `at +${formatSpan(item.startAt - origin)}` : formatSpan(item.durationMs)}</span>
          {item.error && item.error !== "failed" && (
            <span className="timeline-error" style={{ paddingLeft: `${depth * 14}px` }}>
              {item.error}
            </span>
          )}
        </summary>
        <div className="timeline-detail" style={{ paddingLeft: `${depth * 14 + 16}px` }}>
          {item.summary && <p>{item.summary}</p>}
          {item.records.length > 0 && (
            <ul role="list" aria-label="Told by">
              {item.records.map((record, i) => (
                <li key={i}>
                  <code>{record.name}</code>: {record.summary}
                </li>
              ))}
            </ul>
          )}
        </div>
      </details>
      {item.children.length > 0 && (
        <ul role="list" className="timeline-list">
          {item.children.map((child) => (
            <Bar key={child.key} item={child} depth={depth + 1} origin={origin} />
          ))}
        </ul>
      )}
    </li>
  );
}
