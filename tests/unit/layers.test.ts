import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The layers are the table at the top of docs/ARCHITECTURE.md, lowest first: the doc is the one
// source, and this test keeps the code to it. A file may import its own layer or any layer below.
const ROOT = path.resolve(__dirname, "../..");
const SOURCE_ROOTS = ["lib", "components", "app", "server"];

interface Layer {
  name: string;
  paths: string[];
}

function layersOfArchitecture(): Layer[] {
  const doc = fs.readFileSync(path.join(ROOT, "docs/ARCHITECTURE.md"), "utf8");
  const start = doc.indexOf("<!-- layers -->");
  if (start < 0) throw new Error("docs/ARCHITECTURE.md has no <!-- layers --> table");
  const rows = doc.slice(start).split("\n").slice(1);
  const layers: Layer[] = [];
  for (const row of rows.slice(2)) {
    if (!row.startsWith("|")) break;
    const [, name, paths] = row.split("|").map((cell) => cell.trim());
    layers.push({ name: name!, paths: [...paths!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) });
  }
  return layers;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [rel] : [];
  });
}

/** The project files a source file imports (static, dynamic and type-only), as root-relative paths. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), "utf8"), true, true);
  return importedFiles.flatMap(({ fileName: spec }) => {
    const base = spec.startsWith("@/") ? path.join(ROOT, spec.slice(2)) : spec.startsWith(".") ? path.resolve(ROOT, path.dirname(file), spec) : null;
    if (!base) return [];
    const found = ["", ".ts", ".tsx", "/index.ts"].map((ext) => base + ext).find((p) => fs.existsSync(p) && fs.statSync(p).isFile());
    if (!found) throw new Error(`${file} imports "${spec}", which does not resolve`);
    return [path.relative(ROOT, found)];
  });
}

function layerIndex(layers: Layer[], file: string): number {
  // The longest matching path wins, so `lib/index.ts` is not read as part of a `lib/` entry.
  let best = -1;
  let bestLength = -1;
  layers.forEach((layer, i) => {
    for (const p of layer.paths) {
      if ((p.endsWith("/") ? file.startsWith(p) : file === p) && p.length > bestLength) [best, bestLength] = [i, p.length];
    }
  });
  return best;
}

/** Groups of files that import one another in a circle (strongly connected components of two or more). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1) found.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe("layers", () => {
  const layers = layersOfArchitecture();
  const files = SOURCE_ROOTS.flatMap(sourceFiles);

  it("the architecture doc lists the layers", () => {
    expect(layers.length).toBeGreaterThan(5);
  });

  it("every source file belongs to a layer of the architecture doc", () => {
    expect(files.filter((file) => layerIndex(layers, file) < 0)).toEqual([]);
  });

  it("no files import one another in a circle, type-only imports included", () => {
    expect(cycles(new Map(files.map((file) => [file, importsOf(file)])))).toEqual([]);
  });

  it("every import points to the importer's own layer or one below it", () => {
    const upward = files.flatMap((file) => {
      const from = layerIndex(layers, file);
      return importsOf(file)
        .filter((target) => layerIndex(layers, target) > from)
        .map((target) => `${file} (${layers[from]!.name}) imports ${target} (${layers[layerIndex(layers, target)]!.name})`);
    });
    expect(upward).toEqual([]);
  });
});
