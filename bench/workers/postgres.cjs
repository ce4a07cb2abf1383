// A bench worker of the shared-store prototype (docs/PERFORMANCE.md): the same steps as a reqwatch
// worker (claim, heartbeat once, complete), each a committed PostgreSQL transaction
// (synchronous_commit on: durable at commit), until the queue is empty.
const { randomUUID } = require("node:crypto");
const { Client } = require("pg");

const [host, port] = process.argv.slice(2);

async function main() {
  const db = new Client({ host, port: Number(port), user: "postgres", database: "postgres" });
  await db.connect();
  let completed = 0;
  let first = null;
  for (;;) {
    const token = randomUUID();
    const now = Date.now();
    await db.query("BEGIN");
    // The claim: the oldest queued request no other transaction holds (SKIP LOCKED), in one statement.
    const claimed = await db.query(
      `UPDATE requests SET state = 'processing', claim_token = $1, heartbeat_at = $2, updated_at = $2, attempt = attempt + 1
        WHERE id = (SELECT id FROM requests WHERE state = 'queued' ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
        RETURNING id`,
      [token, now],
    );
    if (!claimed.rowCount) {
      await db.query("ROLLBACK");
      break;
    }
    const id = claimed.rows[0].id;
    await db.query("INSERT INTO transitions (request_id, from_state, to_state, at, token) VALUES ($1, 'queued', 'processing', $2, $3)", [id, now, token]);
    await db.query("SELECT pg_notify('reqwatch_changes', $1)", [id]);
    await db.query("COMMIT");
    first ??= performance.timeOrigin + performance.now();
    // A heartbeat: its own small transaction, as a worker's is.
    await db.query("UPDATE requests SET heartbeat_at = $1 WHERE id = $2 AND claim_token = $3", [Date.now(), id, token]);
    // The completion, fenced by the claim's token.
    await db.query("BEGIN");
    const done = await db.query(
      "UPDATE requests SET state = 'completed', updated_at = $1, doc = doc || '{\"output\":\"ok\"}' WHERE id = $2 AND claim_token = $3 AND state = 'processing'",
      [Date.now(), id, token],
    );
    if (done.rowCount !== 1) throw new Error(`lost the claim of ${id}`);
    await db.query("INSERT INTO transitions (request_id, from_state, to_state, at, token) VALUES ($1, 'processing', 'completed', $2, $3)", [
      id,
      Date.now(),
      token,
    ]);
    await db.query("SELECT pg_notify('reqwatch_changes', $1)", [id]);
    await db.query("COMMIT");
    completed++;
  }
  await db.end();
  process.stdout.write(`${JSON.stringify({ completed, first, last: performance.timeOrigin + performance.now() })}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
