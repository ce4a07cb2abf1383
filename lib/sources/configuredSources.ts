import { ReqwatchError } from "../model/errors";
import { defaultClaudeMemPath } from "./claudeMem";
import { sourceNames } from "./liveSource";
import { parseSourceSpec, sourceText, type SourceSpec } from "./sourceSpec";

/** The spec without `?write=1`: what is compared, and what a reader gets. */
function readOnly(spec: SourceSpec): SourceSpec {
  return spec.write ? { ...spec, write: false } : spec;
}

/**
 * The sources a server that takes a source from someone else (an agent, over MCP) may read: those
 * the user started it with, by the names the dashboard gives them and their text, and the ones that
 * name no path: claude-mem where claude-mem keeps its database, and otel (the folder's own).
 */
export class ConfiguredSources {
  readonly #named: readonly { name: string; spec: SourceSpec }[];
  readonly #defaultClaudeMem: Extract<SourceSpec, { kind: "claude-mem" }> = { kind: "claude-mem", file: defaultClaudeMemPath() };

  readonly #otel: () => SourceSpec;
  readonly #cwd: string;

  constructor(configured: readonly SourceSpec[], otel: () => SourceSpec, cwd = process.cwd()) {
    this.#otel = otel;
    this.#cwd = cwd;
    const specs = configured.map(readOnly);
    const names = sourceNames(specs);
    this.#named = specs.map((spec, i) => ({ name: names[i]!, spec }));
  }

  /** Each, as `name (source)`, for the agent to choose from. */
  list(): string[] {
    const claudeMemNamed = this.#named.some(({ name }) => name === "claude-mem");
    return [
      ...this.#named.map(({ name, spec }) => `${name} (${sourceText(spec)})`),
      claudeMemNamed ? sourceText(this.#defaultClaudeMem) : `claude-mem (${this.#defaultClaudeMem.file})`,
      "otel",
    ];
  }

  /**
   * The source `given` names, by name or text; refused before any file is looked at when it is not
   * one of these, so an agent's argument never names a file the user did not.
   */
  resolve(given: string): SourceSpec {
    if (given === "otel") return this.#otel();
    const byName = this.#named.find(({ name }) => name === given);
    if (byName) return byName.spec;
    const key = sourceText(readOnly(parseSourceSpec(given, this.#cwd, this.#otel)));
    const allowed = [...this.#named.map(({ spec }) => spec), this.#defaultClaudeMem].find((spec) => sourceText(spec) === key);
    if (allowed) return allowed;
    throw new ReqwatchError(
      "FORBIDDEN",
      `${JSON.stringify(given)} is not a source this server was given; it reads ${this.list().join(", ")}. To read another, add it to the server's command in the agent's MCP configuration (reqwatch mcp --source <source>, or REQWATCH_SOURCES); nothing was read.`,
    );
  }
}
