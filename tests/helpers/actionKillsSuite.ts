import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRoles, openTracker } from "../../lib/tracker";
import { actionOutcome, readOriginals } from "./actionOutcome";
import { startWorker, waitForExit, waitForLine } from "./processes";
import { tempStateDir } from "./stateDir";

const COUNT = 800;
const ROUNDS = 8;
/**
 * A process running a bulk retry or cleanup, or the monitor's retention, is killed with SIGKILL at a random moment, many times.
 * After the restart every request is wholly before or wholly after the action, the audit entry
 * lists exactly those after, and no request is in neither the files nor the archive.
 * One action per test file (tests/integration/actionKills<Action>.test.ts), so the three run side by side.
 */
export function describeKillsDuring(kind: "retry" | "cleanup" | "retention"): void {
  let template: string;
  const ids = Array.from({ length: COUNT }, (_, i) => `k${String(i).padStart(4, "0")}`);

  beforeAll(() => {
    template = fs.mkdtempSync(path.join(os.tmpdir(), "reqwatch-kills-"));
    const tracker = openTracker({ stateDir: template });
    for (const id of ids) {
      tracker.create({ requestId: id, workspace: "gateway", state: "processing" });
      tracker.transition(id, "failed", { fields: { error: "upstream 503" } });
    }
    tracker.close();
  }, 60_000);

  afterAll(() => fs.rmSync(template, { recursive: true, force: true }));

  describe(`SIGKILL during a bulk ${kind}`, () => {
    it(
      `leaves every request wholly before or after, as the audit log says (${ROUNDS} kills)`,
      async () => {
        const summary: string[] = [];
        // Round -1 runs to the end: how long the whole action takes on this machine spreads the kills over it.
        let fullRunMs = 0;
        for (let round = -1; round < ROUNDS; round++) {
          const stateDir = tempStateDir();
          fs.cpSync(template, stateDir, { recursive: true });
          const originals = readOriginals(stateDir, ids);
          const child = startWorker("runAction.cjs", [stateDir, kind]);
          await waitForLine(child, "started");
          if (round < 0) {
            const started = performance.now();
            await waitForLine(child, "finished");
            fullRunMs = performance.now() - started;
          } else {
            // Spread the kills over the action: right away, a few chunks in, most of the way.
            await new Promise((resolve) => setTimeout(resolve, Math.round(((round + Math.random()) / ROUNDS) * fullRunMs)));
          }
          child.kill("SIGKILL");
          await waitForExit(child);

          const { reader, operator, close } = openRoles({ stateDir });
          const [closed] = operator.actions.closeInterrupted();
          const entry = closed ?? operator.actions.list()[0];
          if (!entry) {
            // Killed before the run wrote its audit entry (the retention's worker says "started" first): it had not begun, so nothing changed.
            const file = (id: string) => path.join(stateDir, "requests", `${id}.json`);
            expect(
              ids.filter((id) => !fs.existsSync(file(id)) || fs.readFileSync(file(id), "utf8") !== originals.get(id)),
              `round ${round}`,
            ).toEqual([]);
            summary.push(`0/${COUNT} (not begun)`);
            close();
            continue;
          }
          const outcome = actionOutcome(stateDir, entry, ids, originals);
          expect(outcome.problems, `round ${round}`).toEqual([]);
          expect(outcome.changed).toBe(entry.changed);
          // The index agrees with the files.
          expect(reader.countsByState()).toMatchObject(
            kind === "retry" ? { failed: COUNT - entry.changed, queued: entry.changed } : { failed: COUNT - entry.changed },
          );
          summary.push(`${entry.changed}/${COUNT}${closed ? "" : " (finished)"}`);
          close();
          if (kind === "retention") {
            // The next run of the retention, in any process, settles the cut one and takes the rest.
            const next = openRoles({ stateDir, retentionMs: 1 });
            const run = await next.operator.runRetention();
            expect(run).toMatchObject({ removed: COUNT - entry.changed, error: null });
            expect(next.reader.countsByState().failed).toBe(0);
            next.close();
          }
        }
        console.log(`${kind} (${Math.round(fullRunMs)} ms uninterrupted): changed before the kill in each round: ${summary.join(", ")}`);
        // The kills landed mid-action at least some of the time (otherwise the test proves little).
        expect(summary.filter((s) => !s.includes("finished") && !s.startsWith("0/")).length).toBeGreaterThan(0);
      },
      kind === "retention" ? 240_000 : 120_000,
    );
  });
}
