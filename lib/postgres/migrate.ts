import { ReqwatchError } from "../model/errors";
import { MIGRATIONS } from "./migrations";
import { shownUrl, type PgPool, type PgPoolClient } from "./pgDriver";

/** The advisory lock the migrations run under (any fixed number: reqwatch's, in every database it opens). */
const MIGRATION_LOCK = 7_305_741_211;

/**
 * Bring the database's schema to the newest version this code knows: each version in a transaction
 * of its own, recorded in `reqwatch_schema`, under an advisory lock so that processes starting at
 * once migrate one after the other (the second finds nothing to do). A database at a newer version
 * than the code is refused: this code would write what the newer schema does not expect.
 */
export async function migrate(pool: PgPool, url: string, migrations: readonly string[] = MIGRATIONS): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await client.query("CREATE TABLE IF NOT EXISTS reqwatch_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
      const { rows } = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM reqwatch_schema");
      const current = rows[0]?.version ?? 0;
      if (current > migrations.length) {
        throw new ReqwatchError(
          "BAD_INPUT",
          `The shared store at ${shownUrl(url)} has schema version ${current}, newer than this reqwatch knows (${migrations.length}): upgrade reqwatch to use it.`,
          { version: current, known: migrations.length },
        );
      }
      for (let version = current + 1; version <= migrations.length; version++) await applyVersion(client, version, migrations[version - 1]!);
      return migrations.length;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

async function applyVersion(client: PgPoolClient, version: number, sql: string): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(sql);
    await client.query("INSERT INTO reqwatch_schema (version) VALUES ($1)", [version]);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw new ReqwatchError(
      "IO_ERROR",
      `The shared store's schema version ${version} could not be applied; nothing of it was kept: ${(error as Error).message}`,
    );
  }
}

/**
 * For a store opened only to read (a copy's source): its schema must be this code's version, and
 * nothing is created or upgraded there.
 */
export async function checkSchema(pool: PgPool, url: string, migrations: readonly string[] = MIGRATIONS): Promise<void> {
  const { rows } = await pool.query<{ found: string | null }>("SELECT to_regclass('reqwatch_schema')::text AS found");
  if (!rows[0]?.found) throw new ReqwatchError("NOT_FOUND", `The database at ${shownUrl(url)} holds no reqwatch shared store.`);
  const versions = await pool.query<{ version: number | null }>("SELECT max(version) AS version FROM reqwatch_schema");
  const version = versions.rows[0]?.version ?? 0;
  if (version !== migrations.length) {
    throw new ReqwatchError(
      "BAD_INPUT",
      `The shared store at ${shownUrl(url)} has schema version ${version}, this reqwatch reads version ${migrations.length}: open it for writing once with the reqwatch of its version first.`,
      { version, known: migrations.length },
    );
  }
}
