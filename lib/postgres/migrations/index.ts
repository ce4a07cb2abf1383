import { V1 } from "./v1";

/** The schema's versions in order: version n is MIGRATIONS[n - 1]. A change to the schema is a new entry, never an edit of one. */
export const MIGRATIONS: readonly string[] = [V1];

export const SCHEMA_VERSION = MIGRATIONS.length;
