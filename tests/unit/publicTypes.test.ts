import path from "node:path";
import ts from "typescript";
import { describe, expect, expectTypeOf, it } from "vitest";
import type * as reqwatch from "../../lib/index";
import { EXPORTS, TYPES } from "../helpers/publicApi";

// What the library publishes, read from lib/index.ts by the TypeScript compiler: the values a
// gateway or worker calls, and the contract's types (lib/types.ts). A name added or dropped here is
// a change of the public surface, made on purpose; the packed package's test checks the built file.
const ROOT = path.resolve(__dirname, "../..");

/** The names a module exports, as values (a class is one) and as types only. */
function exportsOf(file: string): { values: string[]; types: string[] } {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const values: string[] = [];
  const types: string[] = [];
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const typeOnly = symbol.declarations?.some((declaration) => ts.isTypeOnlyImportOrExportDeclaration(declaration)) ?? false;
    (target.flags & ts.SymbolFlags.Value && !typeOnly ? values : types).push(symbol.name);
  }
  return { values: values.sort(), types: types.sort() };
}

describe("the library's public surface", () => {
  it("exports exactly the library's values and the contract's types, from lib/index.ts", () => {
    const { values, types } = exportsOf(path.join(ROOT, "lib/index.ts"));
    expect(values).toEqual([...EXPORTS].sort());
    expect(types).toEqual([...TYPES].sort());
  });

  it("takes its types from the contract alone: lib/types.ts imports no implementation", () => {
    const { importedFiles } = ts.preProcessFile(ts.sys.readFile(path.join(ROOT, "lib/types.ts"))!, true, true);
    expect(importedFiles.map((file) => file.fileName).filter((name) => !/^\.\/(model|process|stateFiles)\//.test(name))).toEqual([]);
  });

  it("keeps the signatures a gateway and a worker call, and nothing else on the tracker", () => {
    type TrackerMember =
      | "ownership"
      | "options"
      | "openReport"
      | "create"
      | "transition"
      | "update"
      | "get"
      | "list"
      | "claimNext"
      | "heartbeat"
      | "recordResult"
      | "complete"
      | "fail"
      | "waitForResult"
      | "sessions"
      | "startMonitor"
      | "rebuildIndex"
      | "indexing"
      | "close";
    expectTypeOf<keyof reqwatch.Tracker>().toEqualTypeOf<TrackerMember>();
    expectTypeOf<typeof reqwatch.openTracker>().toEqualTypeOf<(options?: reqwatch.TrackerOptions) => reqwatch.Tracker>();
    expectTypeOf<typeof reqwatch.runWorker>().toEqualTypeOf<(options: reqwatch.RunWorkerOptions) => reqwatch.WorkerHandle>();
    expectTypeOf<typeof reqwatch.runSharedWorker>().toEqualTypeOf<(options: reqwatch.RunSharedWorkerOptions) => reqwatch.WorkerHandle>();
    expectTypeOf<reqwatch.Tracker["create"]>().toEqualTypeOf<(input: reqwatch.CreateInput) => reqwatch.RequestRecord>();
    expectTypeOf<reqwatch.Tracker["transition"]>().toEqualTypeOf<
      (requestId: string, to: reqwatch.State, extra?: Omit<reqwatch.Change, "to">) => reqwatch.RequestRecord
    >();
    expectTypeOf<reqwatch.Tracker["update"]>().toEqualTypeOf<(requestId: string, change: reqwatch.ChangeInput) => reqwatch.RequestRecord>();
    expectTypeOf<reqwatch.Tracker["get"]>().toEqualTypeOf<(requestId: string) => reqwatch.RequestRecord | null>();
    expectTypeOf<reqwatch.Tracker["list"]>().toEqualTypeOf<(filters?: reqwatch.ListFilters) => reqwatch.RequestPage>();
    expectTypeOf<reqwatch.Tracker["claimNext"]>().toEqualTypeOf<(options?: reqwatch.ClaimOptions) => reqwatch.Claim | null>();
    expectTypeOf<reqwatch.Tracker["heartbeat"]>().toEqualTypeOf<(requestId: string, token: string) => boolean>();
    expectTypeOf<reqwatch.Tracker["complete"]>().toEqualTypeOf<
      (requestId: string, token: string, result?: reqwatch.CompleteResult, by?: string) => reqwatch.Delivery
    >();
    expectTypeOf<reqwatch.Tracker["fail"]>().toEqualTypeOf<
      (requestId: string, token: string, error: string, options?: reqwatch.FailOptions) => reqwatch.Delivery
    >();
    expectTypeOf<reqwatch.Tracker["waitForResult"]>().toEqualTypeOf<(requestId: string, options: { timeoutMs: number }) => Promise<reqwatch.RequestRecord>>();
    expectTypeOf<reqwatch.Tracker["startMonitor"]>().toEqualTypeOf<(options?: Partial<reqwatch.MonitorOptions>) => reqwatch.MonitorWithRetention>();
    expectTypeOf<reqwatch.Tracker["sessions"]>().toEqualTypeOf<reqwatch.SessionTracker>();
    expectTypeOf<reqwatch.Tracker["ownership"]>().toEqualTypeOf<reqwatch.Ownership>();
    expectTypeOf<reqwatch.Tracker["openReport"]>().toEqualTypeOf<reqwatch.RecoveryReport | null>();
    expectTypeOf<reqwatch.Tracker["close"]>().toEqualTypeOf<() => void>();
    expectTypeOf<reqwatch.SessionTracker["start"]>().toEqualTypeOf<() => reqwatch.SessionResult<reqwatch.StartOutcome>>();
    expectTypeOf<reqwatch.SessionTracker["recordCommand"]>().toEqualTypeOf<(input: reqwatch.CommandInput, sessionId?: string) => reqwatch.SessionResult>();
  });
});
