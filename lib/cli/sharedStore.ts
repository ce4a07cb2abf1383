import type { Command } from "commander";
import { isReqwatchError } from "../model/errors";
import type { SharedOperator } from "../postgres/sharedTracker";
import { trackingEnabled } from "../store/options";
import type { SharedTracker } from "../types";
import { UsageError } from "./outcomes";

/** The commands that run on a shared store in this increment; every other one refuses it. */
const ON_SHARED_STORE: readonly string[] = ["create", "update", "get", "list", "retry", "cancel", "monitor"];

/**
 * The shared store a command runs on: `--store`, else REQWATCH_STORE; none means the state folder.
 * With tracking off (REQWATCH_DISABLED) there is none either: the commands a hook runs then answer
 * as they always did, without reaching a server.
 */
export function storeUrlOf(command: Command): string | undefined {
  const url = command.optsWithGlobals<{ store?: string }>().store ?? (process.env.REQWATCH_STORE || undefined);
  if (url === undefined) return undefined;
  try {
    if (!trackingEnabled()) return undefined;
  } catch (error) {
    if (isReqwatchError(error, "BAD_INPUT")) throw new UsageError(error.message);
    throw error;
  }
  // Not shown: a wrong value may still hold a password.
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new UsageError("--store (or REQWATCH_STORE) must be a postgres:// URL: postgres://user:password@host:port/database.");
  return url;
}

/** Run before every command's action: one that does not run on a shared store says so rather than read the state folder. */
export function refuseOffSharedStore(action: Command): void {
  let top = action;
  while (top.parent?.parent) top = top.parent;
  // `store copy` names its store in --from or --to.
  if (ON_SHARED_STORE.includes(top.name()) || top.name() === "store" || storeUrlOf(action) === undefined) return;
  throw new UsageError(
    `not yet on a shared store: reqwatch ${top.name()} reads a state folder; run it without --store and REQWATCH_STORE (on a shared store: ${ON_SHARED_STORE.join(", ")}).`,
  );
}

/** The shared store at `url` for one command, closed after it; a setting it refuses (a REQWATCH_* value) is a usage error. */
export async function withSharedStore<T>(url: string, fn: (store: SharedTracker & SharedOperator) => T | Promise<T>): Promise<T> {
  // Loaded here, not with every command: it brings the shared store and, at open, pg.
  const { openSharedStore } = await import("../postgres/sharedTracker");
  let store: SharedTracker & SharedOperator;
  try {
    store = await openSharedStore(url);
  } catch (error) {
    if (isReqwatchError(error, "BAD_INPUT")) throw new UsageError(error.message);
    throw error;
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** A filter or flag the shared store refuses (BAD_INPUT) is a usage error, exit 2, as a wrong flag is. */
export async function asUsageOnStore<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isReqwatchError(error, "BAD_INPUT")) throw new UsageError(error.message);
    throw error;
  }
}
