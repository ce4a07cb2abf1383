import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The README and docs/ are read by people who have only this repository: every link resolves,
// every setting the code reads and every package it installs is documented, and nothing points
// at a document a reader does not have.
const ROOT = path.resolve(__dirname, "../..");
const DOCS = [
  "README.md",
  ...fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), "utf8");

/** Text outside fenced code blocks, where a `[x](y)` is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Files under `dirs` whose text the reference check reads. */
function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : sourceFiles(rel);
    return /\.(tsx?|mjs|cjs|js|sh|md)$/.test(entry.name) ? [rel] : [];
  });
}

describe("docs", () => {
  it("every relative link in the README and docs/ names a file that exists, and a heading in it that exists", () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [where, anchor] = target!.split("#") as [string, string | undefined];
        const linked = where === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), where));
        if (!fs.existsSync(path.join(ROOT, linked))) broken.push(`${file}: ${target} (no file ${linked})`);
        else if (anchor !== undefined && linked.endsWith(".md") && !anchorsOf(read(linked)).has(anchor))
          broken.push(`${file}: ${target} (no heading #${anchor} in ${linked})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README is read in one sitting, and so is the architecture", () => {
    expect(read("README.md").split("\n").length).toBeLessThanOrEqual(250);
    expect(read("docs/ARCHITECTURE.md").split("\n").length).toBeLessThanOrEqual(400);
  });

  it("the quick start comes before anything else the README explains", () => {
    const headings = [...read("README.md").matchAll(/^##\s+(.+)$/gm)].map((m) => m[1]);
    expect(headings[0]).toBe("Quick start");
  });

  it("no doc, source or comment points at a document outside this repository", () => {
    // Built from parts, so this file does not find itself.
    const outside = new RegExp(["\\bseed \\d", "\\bseed's\\b", "\\bissue \\d", "\\bthe issue\\b", "\\.\\./shared/"].join("|"), "i");
    const files = [...DOCS, ...["lib", "app", "components", "server", "scripts", "bench", "tests"].flatMap(sourceFiles)];
    const found = files.flatMap((file) =>
      read(file)
        .split("\n")
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        .filter(({ line }) => outside.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });

  it("docs/CONFIGURATION.md names every REQWATCH_ setting the code reads", () => {
    const read_ = [...["lib", "server", "scripts"].flatMap(sourceFiles), "playwright.config.ts"].flatMap((file) =>
      [...read(file).matchAll(/\bREQWATCH_[A-Z][A-Z_]*[A-Z]\b/g)].map((m) => m[0]),
    );
    const documented = read("docs/CONFIGURATION.md");
    expect([...new Set(read_)].filter((name) => !documented.includes(`\`${name}`)).sort()).toEqual([]);
  });

  it("docs/DEPENDENCIES.md says why each package in package.json is there", () => {
    const manifest = JSON.parse(read("package.json")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const documented = read("docs/DEPENDENCIES.md");
    const names = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)];
    expect(names.filter((name) => !new RegExp(`(^|[\\s,|(])${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}([\\s,|)]|$)`, "m").test(documented))).toEqual([]);
  });
});
