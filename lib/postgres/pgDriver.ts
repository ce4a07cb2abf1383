import { createRequire } from "node:module";
import { ReqwatchError } from "../model/errors";

/**
 * The few members of the `pg` driver the shared store calls, typed here (the package ships no
 * types). It is loaded on the first `openSharedTracker`: the local tracker never loads it.
 */
export interface PgQueryResult<Row> {
  rows: Row[];
  rowCount: number | null;
}

export interface PgQueryable {
  query<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PgQueryResult<Row>>;
}

export interface PgPoolClient extends PgQueryable {
  release(error?: Error | boolean): void;
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): void;
}

export interface PgNotification {
  channel: string;
  payload?: string;
}

export interface PgClient extends PgQueryable {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: "notification", listener: (message: PgNotification) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  on(event: "end", listener: () => void): void;
}

interface PgModule {
  Pool: new (config: { connectionString: string; max?: number; application_name?: string; options?: string }) => PgPool;
  Client: new (config: { connectionString: string; application_name?: string }) => PgClient;
}

let loaded: Promise<PgModule> | null = null;

/** The driver, loaded once; a clear error when it is not installed. */
export function loadPg(): Promise<PgModule> {
  // Required beside this file where it is CommonJS: the CLI runs its bundles through its code
  // cache, where an import() is a loader Node warns about on stderr as experimental.
  loaded ??= (
    (typeof __filename === "string" ? Promise.resolve().then(() => createRequire(__filename)("pg") as PgModule) : import("pg" as string)) as Promise<
      PgModule & { default?: PgModule }
    >
  ).then(
    (module) => (module.Pool ? module : module.default!),
    (error: unknown) => {
      loaded = null;
      throw new ReqwatchError("NOT_FOUND", 'The shared store needs the "pg" package: npm install pg.', undefined, { cause: error });
    },
  );
  return loaded;
}

/** The store's address as it may be shown: the password replaced by `***`. */
/** Query parameters the driver takes a secret from (`?password=`, and the TLS key's passphrase): shown as `***` too. */
const SECRET_PARAMS = ["password", "sslpassword"];

export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    for (const name of SECRET_PARAMS) if (parsed.searchParams.has(name)) parsed.searchParams.set(name, "***");
    // The search is put back by hand: URLSearchParams would write the stars as %2A.
    return parsed.toString().replace(/%2A%2A%2A/g, "***");
  } catch {
    return "(an address that is not a URL)";
  }
}

/** Every secret the address carries, as written and decoded. */
function secretsOf(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const raw = [parsed.password, ...SECRET_PARAMS.flatMap((name) => parsed.searchParams.getAll(name))].filter((secret) => secret !== "");
  return [...new Set(raw.flatMap((secret) => [secret, safeDecode(secret), encodeURIComponent(secret)]))].filter((secret) => secret !== "");
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A driver's or the server's error as ours, its text with the password taken out wherever it appears. */
export function storeError(url: string, what: string, error: unknown): ReqwatchError {
  const message = withoutPassword(url, error instanceof Error ? error.message : String(error));
  const code = (error as { code?: string }).code;
  // No server there, or no such database: NOT_FOUND; a password or user refused (28P01, 28000): FORBIDDEN.
  const kind = code === "ECONNREFUSED" || code === "ENOENT" || code === "3D000" ? "NOT_FOUND" : code === "28P01" || code === "28000" ? "FORBIDDEN" : "IO_ERROR";
  // Not the driver's error as the cause: its fields (the connection's parameters) may carry the password.
  return new ReqwatchError(kind, `${what} (${shownUrl(url)}): ${message}`, code ? { code } : undefined);
}

function withoutPassword(url: string, text: string): string {
  let out = text;
  // Longest first, so a secret that contains another is taken out whole.
  for (const secret of secretsOf(url).sort((a, b) => b.length - a.length)) out = out.split(secret).join("***");
  return out;
}
