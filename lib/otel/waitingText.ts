/** What an exporter that waits for another says, in the logs and on the Health page. */
export function waitingText(holder: { pid: number; host: string }): string {
  return `another exporter (pid ${holder.pid} on ${holder.host}: a \`reqwatch otel\` or a dashboard with --otel) exports this folder; this one waits, and takes over from where it stops`;
}
