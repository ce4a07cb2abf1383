import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { loadPg } from "../../lib/postgres/pgDriver";
import { openSharedTracker } from "../../lib/postgres/sharedTracker";
import { BIN, runCli } from "../helpers/cli";
import { postgresForFile } from "../helpers/postgres";
import { childEnv, freePort, waitForExit, waitForLine } from "../helpers/processes";
import { tempParent } from "../helpers/stateDir";

const cluster = postgresForFile();

/** A database over TCP with the cluster's password: the URL a user on another host would give. */
async function aStoreUrl(): Promise<{ url: string; password: string }> {
  const socketUrl = await cluster().newDatabase();
  const database = new URL(socketUrl).pathname.slice(1);
  return { url: cluster().tcpUrl(database, cluster().password), password: cluster().password };
}

/** A state folder that does not exist: a command on the shared store must not make or read it. */
function aMissingStateDir(): string {
  return path.join(fs.mkdtempSync(path.join(tempParent(), "cli-store-")), "state");
}

function storeEnv(url: string): NodeJS.ProcessEnv {
  return { ...process.env, REQWATCH_STORE: url };
}

function json<T = Record<string, unknown>>(stdout: string): T {
  return JSON.parse(stdout) as T;
}

/** A claim whose worker went silent: its heartbeat moved back past any timeout, as if no beat came for ten minutes. */
async function aSilentClaim(url: string, requestId: string): Promise<void> {
  const tracker = await openSharedTracker(url);
  try {
    // A workspace of its own: the claim takes this request, not an older one queued again.
    await tracker.create({ requestId, workspace: requestId, state: "queued" });
    await tracker.claimNext({ workspace: requestId, worker: "gone" });
  } finally {
    await tracker.close();
  }
  const { Client } = await loadPg();
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query("UPDATE claims SET heartbeat_at = heartbeat_at - 600000 WHERE request_id = $1", [requestId]);
  await client.end();
}

describe("the CLI on a shared store", () => {
  it("create, update, get, list with its filters, cancel and retry run on the store --store or REQWATCH_STORE names, and no state folder is made", async () => {
    const { url } = await aStoreUrl();
    const stateDir = aMissingStateDir();
    const on = (args: string[]) => runCli(["--store", url, ...args], { stateDir });

    const created = on(["create", "-w", "chat", "--prompt", "hello", "--state", "queued", "--json"]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const first = json<{ requestId: string; state: string }>(created.stdout);
    expect(first.state).toBe("queued");
    const second = on(["create", "-w", "mail", "--id", "mail-1"]);
    expect(second).toMatchObject({ code: 0, stdout: "mail-1\n" });
    // The environment names the store as well as the flag does.
    const third = runCli(["create", "-w", "chat", "--id", "chat-2", "--state", "processing"], { stateDir, env: storeEnv(url) });
    expect(third).toMatchObject({ code: 0, stdout: "chat-2\n" });

    const got = on(["get", first.requestId]);
    expect(got.code).toBe(0);
    expect(json(got.stdout)).toMatchObject({ requestId: first.requestId, workspace: "chat", prompt: "hello", state: "queued" });
    const missing = on(["get", "no-such-request"]);
    expect(missing).toMatchObject({ code: 1, stderr: "reqwatch: Request no-such-request does not exist.\n" });

    const chat = json<{ items: { requestId: string }[] }>(on(["list", "-w", "chat", "--json"]).stdout);
    expect(chat.items.map((item) => item.requestId).sort()).toEqual(["chat-2", first.requestId].sort());
    const queued = json<{ items: { requestId: string }[] }>(on(["list", "-s", "queued,created", "--json"]).stdout);
    expect(queued.items.map((item) => item.requestId).sort()).toEqual(["mail-1", first.requestId].sort());
    const paged = json<{ items: { requestId: string }[]; nextCursor: string }>(
      on(["list", "-n", "2", "--sort", "createdAt", "--order", "asc", "--json"]).stdout,
    );
    expect(paged.items.map((item) => item.requestId)).toEqual([first.requestId, "mail-1"]);
    const rest = json<{ items: { requestId: string }[]; nextCursor: null }>(
      on(["list", "-n", "2", "--sort", "createdAt", "--order", "asc", "--cursor", paged.nextCursor, "--json"]).stdout,
    );
    expect(rest).toEqual({ items: [expect.objectContaining({ requestId: "chat-2" })], nextCursor: null });
    const table = on(["list", "-w", "mail"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID +WORKSPACE +STATE +IN STATE +ATTEMPT +MODEL +UPDATED\nmail-1 +mail +created /);

    const updated = on(["update", "mail-1", "--state", "queued", "--model", "m-2", "--reason", "ready", "--json"]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(json(updated.stdout)).toMatchObject({ requestId: "mail-1", state: "queued", model: "m-2", version: 2 });
    const refused = on(["update", "mail-1", "--state", "completed"]);
    expect(refused).toMatchObject({ code: 1, stderr: "reqwatch: Request mail-1 cannot move from 'queued' to 'completed'.\n" });

    const cancelled = on(["cancel", first.requestId, "no-such-request"]);
    expect(cancelled.code).toBe(1);
    expect(cancelled.stdout).toContain(`Cancelled 1 of 2 request(s).\n  ${first.requestId}  queued -> failed\n  skipped no-such-request: it does not exist\n`);
    const dryRun = on(["retry", "-s", "failed", "--dry-run", "--json"]);
    expect(json(dryRun.stdout)).toMatchObject({ dryRun: true, matched: 1, retried: [{ requestId: first.requestId, from: "failed" }] });
    expect(json(on(["get", first.requestId]).stdout)).toMatchObject({ state: "failed", error: "cancelled" });
    const retried = on(["retry", first.requestId]);
    expect(retried).toMatchObject({
      code: 0,
      stdout: `Retried 1 of 1 request(s).\n  ${first.requestId}  failed -> queued  (manual retry of a failed request)\n`,
    });
    const record = json<{ state: string; transitions: { to: string; by?: string }[] }>(on(["get", first.requestId]).stdout);
    expect(record.state).toBe("queued");
    expect(record.transitions.map((step) => [step.to, step.by])).toEqual([
      ["created", "cli"],
      ["queued", "cli"],
      ["failed", "cli"],
      ["queued", "cli"],
    ]);
    expect(fs.existsSync(stateDir)).toBe(false);
  }, 120_000);

  it("monitor takes back a claim whose heartbeat stopped, in one pass (--once) and as a loop that SIGTERM stops", async () => {
    const { url } = await aStoreUrl();
    const stateDir = aMissingStateDir();
    await aSilentClaim(url, "silent-1");
    const once = runCli(["--store", url, "monitor", "--once"], { stateDir });
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toMatch(/^\S+Z {2}took back 1 claim\(s\) with no heartbeat\n {2}silent-1\n$/);
    expect(json(runCli(["--store", url, "get", "silent-1"], { stateDir }).stdout)).toMatchObject({ state: "queued", attempt: 1 });

    await aSilentClaim(url, "silent-2");
    const loop = spawn(process.execPath, [BIN, "--store", url, "monitor", "--interval", "100ms"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...childEnv(), REQWATCH_STATE_DIR: stateDir },
    });
    await waitForLine(loop, "  silent-2\n");
    loop.kill("SIGTERM");
    expect(await waitForExit(loop)).toBe(0);
    expect(json(runCli(["--store", url, "get", "silent-2"], { stateDir }).stdout)).toMatchObject({ state: "queued" });
    expect(fs.existsSync(stateDir)).toBe(false);
  }, 60_000);

  it("a command not yet on a shared store, and a list filter the store lacks, are refused with exit 2; so is an address that is not postgres://", async () => {
    const { url, password } = await aStoreUrl();
    const stateDir = aMissingStateDir();
    for (const args of [["explain", "some-id"], ["session", "list"], ["queues"], ["cleanup", "--dry-run"], ["restore", "some-id"]]) {
      const refused = runCli(["--store", url, ...args], { stateDir });
      expect(refused.code, args.join(" ")).toBe(2);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^reqwatch: error: not yet on a shared store: reqwatch ${args[0]} reads a state folder; run it without --store and REQWATCH_STORE \\(on a shared store: create, update, get, list, retry, cancel, monitor\\)\\.\\n$`,
        ),
      );
      expect(refused.stderr + refused.stdout).not.toContain(password);
    }
    const filter = runCli(["list", "--callback-failed"], { stateDir, env: storeEnv(url) });
    expect(filter).toMatchObject({ code: 2, stderr: 'reqwatch: error: The shared store does not filter by "callbackFailed" yet.\n' });
    const exported = runCli(["--store", url, "list", "--format", "csv"], { stateDir });
    expect(exported.code).toBe(2);
    expect(exported.stderr).toContain("not yet on a shared store: list --format");
    const notPostgres = runCli(["--store", `mysql://u:${password}@127.0.0.1/db`, "list"], { stateDir });
    expect(notPostgres.code).toBe(2);
    expect(notPostgres.stderr).toBe("reqwatch: error: --store (or REQWATCH_STORE) must be a postgres:// URL: postgres://user:password@host:port/database.\n");
    expect(fs.existsSync(stateDir)).toBe(false);
  }, 60_000);

  it("the password is never printed: a wrong password, no server there, and a wrong command", async () => {
    const { url, password } = await aStoreUrl();
    const stateDir = aMissingStateDir();
    const wrong = url.replace(encodeURIComponent(password), "not-the-password-42");
    const refused = runCli(["--store", wrong, "list"], { stateDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^reqwatch: Could not open the shared store \(postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+\): .*password authentication failed/,
    );
    expect(refused.stderr + refused.stdout).not.toContain("not-the-password-42");

    const nowhere = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${await freePort()}/reqwatch`;
    const unreachable = runCli(["create", "-w", "chat"], { stateDir, env: storeEnv(nowhere) });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /^reqwatch: Could not open the shared store \(postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/reqwatch\): .*ECONNREFUSED/,
    );
    expect(unreachable.stderr + unreachable.stdout).not.toContain(password);

    for (const args of [["no-such-command"], ["list", "--no-such-flag"], ["get"]]) {
      const usage = runCli(["--store", url, ...args], { stateDir });
      expect(usage.code, args.join(" ")).toBe(2);
      expect(usage.stderr + usage.stdout).not.toContain(password);
    }
    expect(fs.existsSync(stateDir)).toBe(false);
  }, 60_000);
});
