/** How a command a session records ended: the CLI's `--status`, the MCP tool's enum, and what recording accepts. */
export const COMMAND_STATUSES = ["completed", "partial", "failed"] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];
