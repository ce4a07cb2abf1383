// `BENCH_ONLY=agentfiles`: a heavy user's history of the three agents' own files (bench/agentHistory.mjs,
// 1 GB by default: BENCH_AGENT_BYTES), each figure beside its baseline in the same run:
// - the first full usage report: ccusage (`daily --json --offline`, the report most agent users run)
//   against `reqwatch usage --by day --json` with no ledger yet, on the same files, and their figures
//   compared model by model and day by day (and with what the generator wrote);
// - a later report after lines are appended to a few files (the ledger read on from where it was);
// - the dashboard with the history in place: its start beside a start with no history, its RSS (the
//   server and every process it started) once the history is read, and a line appended to an open
//   transcript until the open page's news of it and the API's answer with it.
// The files are written once and read warm (from the page cache) by every reader alike.
import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { writeAgentHistory } from "./agentHistory.mjs";
import { otelNews, startServer } from "./server.mjs";

/** ccusage as tests/helpers/clients.ts pins it (its launcher and its native binary), installed into the same folder the tests use. */
const CCUSAGE = ["ccusage@20.0.24", "@ccusage/ccusage-linux-x64@20.0.24"];
const REPORT_RUNS = 5;
const LATER_RUNS = 10;
const STARTS = 3;
const APPENDS = 40;

function installedCcusage(ROOT) {
  const folder = path.join(ROOT, ".toolchain", "clients", CCUSAGE.join("+").replace(/[/@]/g, "_"));
  if (!fs.existsSync(path.join(folder, ".installed"))) {
    const staging = fs.mkdtempSync(path.join(path.dirname(folder), ".installing-"));
    fs.writeFileSync(path.join(staging, "package.json"), JSON.stringify({ name: "client", version: "1.0.0", private: true }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", ...CCUSAGE], { cwd: staging, stdio: "pipe" });
    fs.writeFileSync(path.join(staging, ".installed"), `${CCUSAGE.join("+")}\n`);
    fs.renameSync(staging, folder);
  }
  return path.join(folder, "node_modules", ".bin", "ccusage");
}

/** The CPU time (user and system) of this process's children that have ended, in ms, from /proc: a program's own, whatever else the machine runs. */
function childrenCpuMs() {
  const fields = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** A program run to its end: its time and CPU time in ms and its output, or a thrown error with what it printed. */
function timed(command, args, env) {
  const cpu = childrenCpuMs();
  const start = performance.now();
  const result = spawnSync(command, args, { env, encoding: "utf8", maxBuffer: 256 << 20 });
  const ms = performance.now() - start;
  if (result.status !== 0)
    throw new Error(`${path.basename(command)} ${args.join(" ")} exited ${result.status}: ${result.stderr || result.stdout}`.slice(0, 2000));
  return { ms, cpuMs: childrenCpuMs() - cpu, out: result.stdout };
}

/** ccusage's daily report as day -> model -> tokens. */
function ccusageByDay(report) {
  const days = {};
  for (const day of report.daily) {
    for (const model of day.modelBreakdowns) {
      (days[day.period] ??= {})[model.modelName] = {
        input: model.inputTokens,
        output: model.outputTokens,
        cacheRead: model.cacheReadTokens,
        cacheWrite: model.cacheCreationTokens,
        cost: model.cost,
      };
    }
  }
  return days;
}

/** `reqwatch usage --by day --json` as day -> model -> tokens (a call whose agent named no model under "(not said)"). */
function reqwatchByDay(report) {
  const days = {};
  for (const row of report.rows) {
    for (const model of row.models) {
      (days[row.period] ??= {})[model.model ?? "(not said)"] = {
        input: model.inputTokens,
        output: model.outputTokens,
        cacheRead: model.cacheReadTokens,
        cacheWrite: model.cacheWriteTokens,
        cost: model.costUsd,
      };
    }
  }
  return days;
}

/** Where two reports differ: each day and model whose tokens are not the same in both, or whose costs differ by more than a millionth. */
function differences(a, b) {
  const found = [];
  for (const day of new Set([...Object.keys(a), ...Object.keys(b)])) {
    for (const model of new Set([...Object.keys(a[day] ?? {}), ...Object.keys(b[day] ?? {})])) {
      const x = a[day]?.[model];
      const y = b[day]?.[model];
      for (const field of ["input", "output", "cacheRead", "cacheWrite"]) {
        if (x?.[field] !== y?.[field]) found.push({ day, model, field, ccusage: x?.[field] ?? null, reqwatch: y?.[field] ?? null });
      }
      if (x && y && Math.abs(x.cost - y.cost) > 1e-6 * Math.max(1, x.cost)) found.push({ day, model, field: "cost", ccusage: x.cost, reqwatch: y.cost });
    }
  }
  return found;
}

/** Per model, over every day. */
function byModel(days) {
  const models = {};
  for (const day of Object.values(days)) {
    for (const [name, sums] of Object.entries(day)) {
      const into = (models[name] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 });
      for (const field of Object.keys(into)) into[field] += sums[field] ?? 0;
    }
  }
  return models;
}

/** The resident memory, in MB, of a process and every process it started (each counted once; its threads are in it). */
function treeRssMb(pid) {
  let kb = 0;
  const visit = (id) => {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${id}/status`, "utf8"))?.[1] ?? 0);
      for (const task of fs.readdirSync(`/proc/${id}/task`)) {
        for (const child of fs.readFileSync(`/proc/${id}/task/${task}/children`, "utf8").split(" ").filter(Boolean)) visit(child);
      }
    } catch {
      // Gone meanwhile: nothing of it to count.
    }
  };
  visit(pid);
  return kb / 1024;
}

/** A figure that is not a time: a size or a count. */
function figure(rows, name, value, unit, extra = {}) {
  rows.push({ name, value: Math.round(value), unit, ...extra });
  console.log(
    `${name.padEnd(56)} ${String(Math.round(value)).padStart(8)} ${unit}${extra.target ? `   target ${extra.target}` : ""}${extra.baseline !== undefined ? `   baseline ${Math.round(extra.baseline)} ${unit}` : ""}`,
  );
}

/** Every transcript the dashboard follows in a home: the generated files, each agent's. */
function transcriptCount(history) {
  return history.agents.claude.files + history.agents.codex.files + history.agents.gemini.files;
}

/** The dashboard's agent-file counts (files, lines) from its Health API. */
async function filesRead(url) {
  const health = await (await fetch(`${url}/api/health`)).json();
  const rows = health.telemetry?.agentFiles ?? [];
  return { files: rows.reduce((sum, row) => sum + row.files, 0), lines: rows.reduce((sum, row) => sum + row.lines, 0) };
}

/**
 * One start of the dashboard over `env`'s agent folders with a new state directory: until it
 * listens, then until every transcript has been read (its position kept), and its RSS then. With
 * `probe` (open transcripts), a prompt is appended to one of them every second while it reads, each
 * timed until the API answers with it: what a user sees of a running agent meanwhile.
 */
async function startDashboard(ROOT, tempDir, env, expectFiles, probe = []) {
  const stateDir = tempDir("agentfiles-state");
  const started = performance.now();
  const server = await startServer(ROOT, stateDir, { REQWATCH_OTLP_PORT: "0", ...env }, [], null);
  const listening = performance.now() - started;
  let reading = true;
  const probes = [];
  const probing = (async () => {
    for (let i = 0; reading && probe.length > 0; i++) {
      probes.push(await untilShown(server.url, probe[i % probe.length], `appended while reading ${i} ${randomUUID()}`));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  let read = { files: 0, lines: 0 };
  for (;;) {
    read = await filesRead(server.url);
    if (read.files >= expectFiles) break;
    if (performance.now() - started > 600_000) throw new Error(`the dashboard read ${read.files} of ${expectFiles} files in 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const readAll = performance.now() - started;
  reading = false;
  await probing;
  // What it holds once the history is read and a page has been asked for, after a moment at rest.
  await (await fetch(`${server.url}/api/requests?source=otel&limit=50`)).text();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return { server, stateDir, listening, readAll, read, probes, rssMb: treeRssMb(server.child.pid) };
}

/**
 * A prompt appended to an open transcript, timed until the API answers with it (the page's refetch),
 * then its answer appended so the turn ends; `onAppended` is told when it was written. Ms, or null if
 * not shown within 10 s.
 */
async function untilShown(url, file, text, onAppended = () => {}) {
  const prompt = claudePromptLines(file, text, Date.now());
  const t0 = performance.now();
  fs.appendFileSync(file, prompt.text);
  onAppended(t0);
  let shown = null;
  // Its turn, by its session and its time (a text search would find the earlier prompts too: it matches words).
  const sessionId = path.basename(file, ".jsonl");
  while (shown === null && performance.now() - t0 < 10_000) {
    const answer = await (await fetch(`${url}/api/requests?source=otel&limit=20`)).json();
    if (answer.items.some((row) => row.sessionId === sessionId && row.createdAt === prompt.at)) shown = performance.now() - t0;
    else await new Promise((resolve) => setTimeout(resolve, 10));
  }
  fs.appendFileSync(file, claudeAnswerLine(prompt, "claude-sonnet-4-5", Date.now()));
  return shown;
}

/** The lines Claude Code writes for a new prompt in a session: queued, then the prompt (a new promptId). */
function claudePromptLines(file, prompt, at) {
  const sessionId = path.basename(file, ".jsonl");
  const last = fs
    .readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .reverse()
    .map((line) => JSON.parse(line))
    .find((line) => line.cwd);
  const common = { userType: "external", entrypoint: "cli", cwd: last.cwd, sessionId, version: last.version, gitBranch: "main" };
  const uuid = randomUUID();
  return {
    uuid,
    common,
    at,
    text: [
      { type: "queue-operation", operation: "enqueue", timestamp: new Date(at).toISOString(), sessionId, content: prompt },
      {
        parentUuid: last.uuid ?? null,
        isSidechain: false,
        promptId: randomUUID(),
        type: "user",
        message: { role: "user", content: prompt },
        uuid,
        timestamp: new Date(at).toISOString(),
        permissionMode: "default",
        promptSource: "user",
        ...common,
      },
    ]
      .map((line) => `${JSON.stringify(line)}\n`)
      .join(""),
  };
}

/** The model's answer to that prompt, ending its turn. */
function claudeAnswerLine(prompt, model, at) {
  const line = {
    parentUuid: prompt.uuid,
    isSidechain: false,
    message: {
      id: `msg_${randomUUID()}`,
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text: "Done." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 4, cache_creation_input_tokens: 200, cache_read_input_tokens: 30_000, output_tokens: 12 },
    },
    requestId: `req_${randomUUID()}`,
    type: "assistant",
    uuid: randomUUID(),
    timestamp: new Date(at).toISOString(),
    ...prompt.common,
  };
  return `${JSON.stringify(line)}\n`;
}

export async function measureAgentFiles({ ROOT, tempDir, summarize, ratio, median, rows }) {
  const bytes = Number(process.env.BENCH_AGENT_BYTES ?? 1e9);
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-bench-agentfiles-"));
  const home = path.join(parent, "home");
  const emptyHome = path.join(parent, "empty-home");
  fs.mkdirSync(emptyHome);
  try {
    console.log(`\nwriting ${(bytes / 1e9).toFixed(2)} GB of agent history...`);
    const generating = performance.now();
    const history = writeAgentHistory(home, { bytes, variant: 1 });
    figure(
      rows,
      `generated history: ${history.files} files, ${Object.values(history.agents).reduce((n, a) => n + a.sessions, 0)} sessions`,
      history.bytes / 1e6,
      "MB",
      { seconds: Number(((performance.now() - generating) / 1000).toFixed(1)) },
    );
    const size = `${(history.bytes / 1e9).toFixed(1)} GB`;
    const ccusage = installedCcusage(ROOT);
    const reqwatch = path.join(ROOT, "bin", "reqwatch.js");
    const env = (over) => ({ PATH: process.env.PATH, HOME: home, TZ: "UTC", ...over });
    // The ledger in a folder of the run's own, as the default one in the home's cache folder is (kept there, every run after the first would find it).
    const usageEnv = (stateDir) => env({ REQWATCH_STATE_DIR: stateDir, REQWATCH_TELEMETRY_DIR: path.join(stateDir, "telemetry") });

    // The first full report, each tool reading every file, the two taking turns so a change of the
    // machine's load moves both: ccusage keeps nothing between runs; reqwatch has a new state directory
    // (no ledger) each time.
    const hasUsage = /^\s+usage\b/m.test(spawnSync(process.execPath, [reqwatch, "--help"], { env: env(), encoding: "utf8" }).stdout);
    const ccusageRuns = [];
    const firstRuns = [];
    for (let i = 0; i < REPORT_RUNS; i++) {
      ccusageRuns.push(timed(ccusage, ["daily", "--json", "--offline"], env()));
      if (!hasUsage) continue;
      const stateDir = tempDir("agentfiles-usage");
      firstRuns.push(timed(process.execPath, [reqwatch, "usage", "--by", "day", "--json"], usageEnv(stateDir)));
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
    const ccusageDays = ccusageByDay(JSON.parse(ccusageRuns.at(-1).out));
    const baseline = summarize(
      `baseline: ccusage daily --json --offline, ${size} history`,
      ccusageRuns.map((run) => run.ms),
    );
    const written = Object.fromEntries(
      Object.entries(history.models).map(([model, { input, output, cacheRead, cacheWrite }]) => [model, { input, output, cacheRead, cacheWrite }]),
    );
    const ccusageModels = byModel(ccusageDays);
    const ccusageOff = Object.keys(written).filter((model) =>
      ["input", "output", "cacheRead", "cacheWrite"].some((field) => ccusageModels[model]?.[field] !== written[model][field]),
    );
    rows.push({ name: "ccusage's tokens against what the generator wrote", models: Object.keys(written).length, modelsDiffering: ccusageOff });
    console.log(
      `ccusage's tokens against what the generator wrote: ${ccusageOff.length ? `differ for ${ccusageOff.join(", ")}` : `equal for all ${Object.keys(written).length} models`}`,
    );

    if (!hasUsage) {
      rows.push({ name: "reqwatch usage --by day --json", missing: "this build has no `reqwatch usage` command" });
      console.log("reqwatch usage --by day --json: not measured, this build has no `reqwatch usage` command");
    } else {
      const first = summarize(
        "reqwatch usage --by day --json, first (no ledger)",
        firstRuns.map((run) => run.ms),
        { target: "faster than ccusage" },
      );
      ratio("reqwatch usage first report / ccusage, p50", first.p50 / baseline.p50, { target: "< 1" });
      const baselineCpu = summarize(
        "baseline: ccusage, CPU time (user + system)",
        ccusageRuns.map((run) => run.cpuMs),
      );
      const firstCpu = summarize(
        "reqwatch usage first report, CPU time (user + system)",
        firstRuns.map((run) => run.cpuMs),
      );
      ratio("reqwatch usage first report / ccusage, CPU time, p50", firstCpu.p50 / baselineCpu.p50);
      const reqwatchDays = reqwatchByDay(JSON.parse(firstRuns.at(-1).out));
      const differ = differences(ccusageDays, reqwatchDays);
      rows.push({
        name: "reqwatch usage against ccusage, by day and model",
        days: Object.keys(ccusageDays).length,
        differences: differ.length,
        firstDifferences: differ.slice(0, 20),
      });
      console.log(
        `reqwatch usage against ccusage, by day and model: ${differ.length ? `${differ.length} differences, first: ${JSON.stringify(differ.slice(0, 3))}` : `equal on ${Object.keys(ccusageDays).length} days`}`,
      );

      // Later reports: a few transcripts written to since (a new call in each), the ledger read on from where it was.
      const stateDir = tempDir("agentfiles-ledger");
      timed(process.execPath, [reqwatch, "usage", "--by", "day", "--json"], usageEnv(stateDir));
      const later = [];
      const laterBaseline = [];
      const claudeFiles = history.recent.filter((entry) => entry.agent === "claude").map((entry) => entry.file);
      for (let round = 0; round < LATER_RUNS; round++) {
        for (const file of claudeFiles.slice(0, 5)) {
          const prompt = claudePromptLines(file, `later report ${round}`, Date.now());
          fs.appendFileSync(file, prompt.text + claudeAnswerLine(prompt, "claude-sonnet-4-5", Date.now()));
        }
        later.push(timed(process.execPath, [reqwatch, "usage", "--by", "day", "--json"], usageEnv(stateDir)).ms);
        laterBaseline.push(timed(ccusage, ["daily", "--json", "--offline"], env()).ms);
      }
      summarize("baseline: ccusage after appends to 5 files", laterBaseline);
      summarize("reqwatch usage after appends to 5 files (ledger kept)", later, { target: "p50 <= 500 ms" });
      const afterDiffer = differences(
        ccusageByDay(JSON.parse(timed(ccusage, ["daily", "--json", "--offline"], env()).out)),
        reqwatchByDay(JSON.parse(timed(process.execPath, [reqwatch, "usage", "--by", "day", "--json"], usageEnv(stateDir)).out)),
      );
      rows.push({
        name: "reqwatch usage (ledger kept) against ccusage after the appends",
        differences: afterDiffer.length,
        firstDifferences: afterDiffer.slice(0, 20),
      });
      console.log(`reqwatch usage (ledger kept) against ccusage after the appends: ${afterDiffer.length ? `${afterDiffer.length} differences` : "equal"}`);
      fs.rmSync(stateDir, { recursive: true, force: true });
    }

    // The dashboard: starts with no history and with it, alternating, each with a new state directory.
    const folders = (root) => ({
      REQWATCH_CLAUDE_DIR: path.join(root, ".claude"),
      REQWATCH_CODEX_DIR: path.join(root, ".codex"),
      REQWATCH_GEMINI_DIR: path.join(root, ".gemini"),
    });
    const bare = [];
    const full = [];
    let kept = null;
    for (let i = 0; i < STARTS; i++) {
      const none = await startDashboard(ROOT, tempDir, folders(emptyHome), 0);
      bare.push(none);
      await none.server.stop();
      fs.rmSync(none.stateDir, { recursive: true, force: true });
      const run = await startDashboard(ROOT, tempDir, folders(home), transcriptCount(history));
      full.push(run);
      if (i < STARTS - 1) {
        await run.server.stop();
        fs.rmSync(run.stateDir, { recursive: true, force: true });
      } else kept = run;
    }
    const bareListen = summarize(
      "baseline: dashboard start (listening), no agent history",
      bare.map((run) => run.listening),
    );
    const fullListen = summarize(
      `dashboard start (listening), ${size} agent history`,
      full.map((run) => run.listening),
    );
    ratio("dashboard start with the history / without, p50", fullListen.p50 / bareListen.p50);
    summarize(
      `dashboard start until all ${transcriptCount(history)} transcripts are read`,
      full.map((run) => run.readAll),
    );
    figure(rows, "dashboard RSS (all its processes) after the history is read", median(full.map((run) => run.rssMb)), "MB", {
      target: "<= 300",
      baseline: median(bare.map((run) => run.rssMb)),
      lines: kept.read.lines,
    });

    // A line appended to an open transcript until the open page's news of it (the `sources` event it
    // refetches on) and until the API answers with it.
    const { url } = kept.server;
    const news = await otelNews(url);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const open = history.recent.filter((entry) => entry.agent === "claude").map((entry) => entry.file);
    const toEvent = [];
    const toApi = [];
    let missed = 0;
    for (let i = 0; i < APPENDS; i++) {
      let t0 = 0;
      const seen = news.next();
      const shown = await untilShown(url, open[i % open.length], `appended prompt ${i} ${randomUUID()}`, (at) => (t0 = at));
      const evented = await Promise.race([seen, new Promise((resolve) => setTimeout(() => resolve(null), 10_000))]);
      if (shown === null || evented === null) missed++;
      if (shown !== null) toApi.push(shown);
      if (evented !== null) toEvent.push(evented - t0);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await news.close();
    summarize("line appended to an open transcript -> the open page's event", toEvent, { target: "p95 <= 1000 ms", missed });
    summarize("line appended to an open transcript -> the API answers with it", toApi, { target: "p95 <= 1000 ms" });
    figure(rows, "dashboard RSS (all its processes) after the appends", treeRssMb(kept.server.child.pid), "MB", { target: "<= 300" });
    await kept.server.stop();
    fs.rmSync(kept.stateDir, { recursive: true, force: true });

    // Context: a user who keeps 60 days (REQWATCH_TELEMETRY_RETENTION=61d) has the whole history read
    // at the dashboard's first start, not only the last day's files.
    const whole = await startDashboard(ROOT, tempDir, { ...folders(home), REQWATCH_TELEMETRY_RETENTION: "61d" }, transcriptCount(history), open);
    summarize(`kept 60 days: dashboard start until all ${transcriptCount(history)} transcripts are read`, [whole.readAll], { lines: whole.read.lines });
    summarize(
      "kept 60 days: a line appended meanwhile -> the API answers with it",
      whole.probes.filter((ms) => ms !== null),
      { missed: whole.probes.filter((ms) => ms === null).length },
    );
    figure(rows, "kept 60 days: dashboard RSS after the whole history is read", whole.rssMb, "MB", { target: "<= 300" });
    await whole.server.stop();
    fs.rmSync(whole.stateDir, { recursive: true, force: true });
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
}
