/**
 * The header an action carries the per-launch token in: the browser sets it
 * (components/data/queries.ts) and the route guard checks it (app/_routes/guard.ts).
 */
export const ACTION_TOKEN_HEADER = "x-reqwatch-token";
