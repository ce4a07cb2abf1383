// The package's types without zod: `npm run build:lib` runs this on dist/index.d.ts after
// dts-bundle-generator. The request file's types are zod's inferred types in the sources
// (`RequestRecord = z.infer<typeof requestSchema>`: the schema is their one source), and in the
// bundled declarations they would make every consumer install zod for its types alone. Each such
// alias is written out as the plain type TypeScript resolves it to, the schema declarations and the
// zod import go, and the build fails if anything still names zod.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const file = path.join(ROOT, process.argv[2] ?? "dist/index.d.ts");

const mentionsZod = (node, source) => /\bz\./.test(node.getText(source));

export function plainTypes(text, fileName) {
  const host = ts.createCompilerHost({});
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (path.resolve(name) === path.resolve(fileName) ? text : readFile(name));
  const program = ts.createProgram(
    [fileName],
    {
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      skipLibCheck: true,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
    },
    host,
  );
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(fileName);
  const printer = ts.createPrinter({ removeComments: true });
  const flags =
    ts.NodeBuilderFlags.NoTruncation |
    ts.NodeBuilderFlags.InTypeAlias |
    ts.NodeBuilderFlags.MultilineObjectLiterals |
    ts.NodeBuilderFlags.UseStructuralFallback;
  const edits = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && statement.moduleSpecifier.getText(source).slice(1, -1) === "zod") {
      edits.push({ start: statement.getFullStart(), end: statement.getEnd(), text: "" });
    } else if (ts.isVariableStatement(statement) && mentionsZod(statement, source)) {
      // A schema's declaration: referenced only by the aliases written out below.
      if (statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword))
        throw new Error(`plain-types: an exported schema: ${statement.getText(source).slice(0, 80)}`);
      edits.push({ start: statement.getFullStart(), end: statement.getEnd(), text: "" });
    } else if (ts.isTypeAliasDeclaration(statement) && mentionsZod(statement.type, source)) {
      const node = checker.typeToTypeNode(checker.getTypeAtLocation(statement.name), statement, flags);
      if (!node) throw new Error(`plain-types: cannot write out ${statement.name.text}`);
      edits.push({ start: statement.type.getStart(source), end: statement.type.getEnd(), text: printer.printNode(ts.EmitHint.Unspecified, node, source) });
    }
  }
  let result = text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  const left = result.split("\n").filter((line) => /\bz\.|['"]zod['"]/.test(line));
  if (left.length > 0) throw new Error(`plain-types: the package's types still name zod:\n${left.slice(0, 5).join("\n")}`);
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(file, plainTypes(fs.readFileSync(file, "utf8"), file));
}
