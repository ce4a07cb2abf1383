// BENCH_ONLY=bigfolder: the CLI on a big folder, at 10,000 and 100,000 request files,
// each figure beside its baseline measured in the same run.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const RUNS = 15;

function cli(ROOT, stateDir, args, env = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [path.join(ROOT, "bin/reqwatch.js"), ...args], {
    env: { ...process.env, REQWATCH_STATE_DIR: stateDir, ...env },
    maxBuffer: 64 * 1024 * 1024,
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`reqwatch ${args.join(" ")}: ${result.stderr}`);
  return [Number(process.hrtime.bigint() - start) / 1e6, result.stdout];
}

function removeIndex(stateDir) {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(stateDir, `index.db${suffix}`), { force: true });
}

/** One thread reading and parsing every file, nothing else: the disk's and JSON's pace. */
function bareReadAndParse(stateDir) {
  const dir = path.join(stateDir, "requests");
  const start = process.hrtime.bigint();
  for (const name of fs.readdirSync(dir)) JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function bareNodeStart() {
  const start = process.hrtime.bigint();
  spawnSync(process.execPath, ["-e", "0"]);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** `reqwatch follow`, started by the bench (not detached), once it vouches for a complete index. */
async function startFollower(ROOT, stateDir) {
  const child = spawn(process.execPath, [path.join(ROOT, "bin/reqwatch.js"), "follow", "--state-dir", stateDir], { stdio: "ignore" });
  const holder = path.join(stateDir, "follower", "holder.json");
  for (;;) {
    let pid = null;
    try {
      pid = JSON.parse(fs.readFileSync(holder, "utf8")).pid;
    } catch {
      // Not written yet.
    }
    if (pid === child.pid) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
}

/**
 * A first `list` on no index (a follower started after it, as a user's command starts one), then the
 * next `list` while that follower builds the index: it must not wait longer than the first did.
 */
function nextCommand(ROOT, stateDir, label, summarize, kind) {
  const first = [];
  const next = [];
  for (let round = 0; round < 3; round++) {
    spawnSync("pkill", ["-f", `follow --state-dir ${stateDir}`]);
    removeIndex(stateDir);
    fs.rmSync(path.join(stateDir, "follower"), { recursive: true, force: true });
    first.push(cli(ROOT, stateDir, ["list", "--limit", "20"])[0]);
    next.push(cli(ROOT, stateDir, ["list", "--limit", "20"])[0]);
  }
  spawnSync("pkill", ["-f", `follow --state-dir ${stateDir}`]);
  summarize(`first \`list --limit 20\` on ${label} ${kind} files, a follower started after`, first);
  summarize(`the next \`list --limit 20\` on ${label} ${kind} files, while the follower builds`, next, { target: "<= the first" });
}

export async function measureBigFolder({ ROOT, writeFiles, tempDir, summarize, ratio, median }) {
  const warm = {};
  for (const count of [10_000, 100_000]) {
    const label = count.toLocaleString("en");
    const stateDir = tempDir(`big-${count}`);
    console.log(`\nwriting ${label} request files, each with its last update as its modification time...`);
    const written = writeFiles(stateDir, count, Date.now(), { mtimeAsUpdated: true });
    const middle = written[Math.floor(count / 2)].id;
    const noFollower = { REQWATCH_FOLLOW: "0" };

    // First commands on the folder with no index, each beside the bare read and parse of the same round.
    const bare = [];
    const firstList = [];
    const firstGet = [];
    for (let round = 0; round < 3; round++) {
      bare.push(bareReadAndParse(stateDir));
      removeIndex(stateDir);
      firstList.push(cli(ROOT, stateDir, ["list", "--limit", "20"], noFollower)[0]);
      removeIndex(stateDir);
      firstGet.push(cli(ROOT, stateDir, ["get", middle], noFollower)[0]);
    }
    summarize(`baseline: read + JSON.parse of the ${label} files, one thread`, bare);
    const list = summarize(`first \`list --limit 20\` on ${label} files, no index`, firstList, {
      target: count === 100_000 ? "<= 2.5x the bare read + parse" : undefined,
    });
    summarize(`first \`get <id>\` on ${label} files, no index`, firstGet, { target: "<= 300 ms" });
    ratio(`first list / bare read + parse (${label})`, list.p50 / median(bare), count === 100_000 ? { target: "<= 2.5" } : {});
    nextCommand(ROOT, stateDir, label, summarize, "live");
    // The same files as a copy leaves them (`cp -r`, a backup restored, a checkout): every modification time the copy's, in the directory's order.
    const dir = path.join(stateDir, "requests");
    const copiedAt = new Date();
    for (const name of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, name), copiedAt, copiedAt);
    const copiedBare = [];
    const copiedList = [];
    for (let round = 0; round < 3; round++) {
      copiedBare.push(bareReadAndParse(stateDir));
      removeIndex(stateDir);
      copiedList.push(cli(ROOT, stateDir, ["list", "--limit", "20"], noFollower)[0]);
    }
    summarize(`baseline: read + JSON.parse of the ${label} copied files, one thread`, copiedBare);
    const copied = summarize(`first \`list --limit 20\` on ${label} copied files, no index`, copiedList, {
      target: count === 100_000 ? "<= 2.5x the bare read + parse" : undefined,
    });
    ratio(`first list / bare read + parse, copied (${label})`, copied.p50 / median(copiedBare), count === 100_000 ? { target: "<= 2.5" } : {});
    nextCommand(ROOT, stateDir, label, summarize, "copied");
    // A command that needs every file (queues) builds the index in full.
    removeIndex(stateDir);
    summarize(`first \`queues\` on ${label} files (the whole index built)`, [cli(ROOT, stateDir, ["queues"], noFollower)[0]]);

    // Warm: the index complete, a follower running, beside a bare node start, alternating.
    const node = [];
    const cliStart = [];
    const warmList = [];
    const follower = await startFollower(ROOT, stateDir);
    try {
      cli(ROOT, stateDir, ["list", "--limit", "20"]);
      for (let i = 0; i < RUNS; i++) {
        node.push(bareNodeStart());
        cliStart.push(cli(ROOT, stateDir, ["--version"])[0]);
        warmList.push(cli(ROOT, stateDir, ["list", "--limit", "20"])[0]);
      }
      // Another program's change shows in the next list: a file added, newer than every other.
      const dir = path.join(stateDir, "requests");
      const added = { ...JSON.parse(fs.readFileSync(path.join(dir, `${middle}.json`), "utf8")), requestId: "bench-added", lastUpdatedAt: Date.now() + 60_000 };
      fs.writeFileSync(path.join(dir, ".bench-added.tmp"), JSON.stringify(added));
      fs.renameSync(path.join(dir, ".bench-added.tmp"), path.join(dir, "bench-added.json"));
      const shown = JSON.parse(cli(ROOT, stateDir, ["list", "--limit", "1", "--json"])[1]).items[0]?.requestId;
      if (shown !== "bench-added") throw new Error(`the next list showed ${shown}, not the file just added`);
    } finally {
      follower.kill("SIGTERM");
      await new Promise((resolve) => follower.once("exit", resolve));
    }
    summarize(`baseline: bare \`node -e 0\` start (${label} group)`, node);
    summarize(`baseline: the CLI's own start, \`reqwatch --version\` (${label} group)`, cliStart);
    warm[count] = summarize(`warm \`list --limit 20\` on ${label} files, a follower running`, warmList, {
      target: count === 100_000 ? "<= 3x a bare node start; within 20% of 10k's" : undefined,
    });
    ratio(`warm list / bare node start (${label})`, warm[count].p50 / median(node), count === 100_000 ? { target: "<= 3" } : {});
    // Context: with no follower, each list checks every file (the behaviour before a follower).
    summarize(
      `warm \`list --limit 20\` on ${label} files, no follower (every file checked)`,
      Array.from({ length: 5 }, () => cli(ROOT, stateDir, ["list", "--limit", "20"], noFollower)[0]),
    );
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
  ratio("warm list at 100,000 / at 10,000", warm[100_000].p50 / warm[10_000].p50, { target: "<= 1.2" });
}
