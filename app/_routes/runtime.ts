import "server-only";
import { cache } from "react";
import { getRuntime } from "@/lib/dashboard/runtime";
import { queuesView } from "@/lib/views/queuesView";
import { receivedSession, tableView } from "@/lib/dashboard/readApi";
import { sessionsView } from "@/lib/views/sessionsView";
import type { RequestQuery } from "@/lib/model/requestQuery";
import { machineTimeZone } from "@/lib/telemetry/usage/usageReport";
import type { UsageQueryInput } from "@/app/api/usage/schema";

/**
 * The pages' and route handlers' view of the process's runtime (lib/dashboard/runtime.ts), which the
 * dashboard server opened before it started listening.
 */
/** The read model: what the pages show. */
export const getReader = () => getRuntime().reader;
/** A person's actions: the action routes. */
export const getOperator = () => getRuntime().operator;
/** The one fan-out of the change feed to every browser's event stream. */
export const getFeedHub = () => getRuntime().feed;
export const getRecoveryNotice = () => getRuntime().recoveryNotice();
export const getActionToken = () => getRuntime().actionToken;
/** What the monitor's latest pass found stuck: table rows show its reasons. */
export const getLastStuck = () => getRuntime().lastStuck();
export const getHealth = (options?: { unmappedOffset?: number }) => getRuntime().health(options);
/** How far indexing the folder is (a first open), null when the index is complete. */
export const getIndexing = () => getRuntime().indexing();
/** While the index fills, until its first batch (the newest requests) is in, so a page shows them; at once otherwise. */
export const untilFirstBatch = () => getRuntime().firstBatch();
/** The queues (a GROUP BY over queued and processing rows), once per page render: the header and the overview both show them. */
export const getQueues = cache(() => queuesView(getRuntime().reader, getRuntime().lastStuck()));
/** Other programs' queues the dashboard reads (--source), as of their latest look. */
export const getSources = () => getRuntime().sources.statuses();
/** The requests table's page for a URL query: the folder's, or a source's. */
export const getTableView = (query: RequestQuery) => tableView(getRuntime(), query);
/** The agents' usage by day, month, session, project or model (the machine's time zone unless one is named). */
export const getUsage = ({ agent, timezone, ...query }: UsageQueryInput) => getRuntime().usage({ ...query, timezone: timezone ?? machineTimeZone() }, agent);
/** The sessions list: the folder's and those received over OpenTelemetry. */
export const getSessions = () => sessionsView(getRuntime().reader, getRuntime().telemetrySessions);
/** A session received over OpenTelemetry (NOT_FOUND when none carries the id). */
export const getReceivedSession = (id: string) => receivedSession(getRuntime(), id);
