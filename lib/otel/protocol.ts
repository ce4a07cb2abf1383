import { ReqwatchError } from "../model/errors";

/**
 * The OTLP/HTTP encoding the standard variables ask for one signal: OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL,
 * else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. Anything else is refused, naming the variable set.
 */
export function otlpProtocol(signal: "TRACES" | "METRICS", env: NodeJS.ProcessEnv = process.env): "http/json" | "http/protobuf" {
  const name = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] !== undefined ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL` : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = env[name] ?? "http/protobuf";
  if (protocol === "http/json" || protocol === "http/protobuf") return protocol;
  throw new ReqwatchError("BAD_INPUT", `${name}=${protocol}: reqwatch exports over HTTP; use http/protobuf (the default) or http/json.`);
}

/**
 * Where one signal goes, as the exporter reads the standard variables: OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT
 * as it is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/<signal>, else http://localhost:4318/v1/<signal>.
 * An endpoint that is not an http(s) URL (`localhost:4318` reads as the scheme `localhost:`) is refused, naming the variable.
 */
export function otlpEndpoint(signal: "TRACES" | "METRICS", env: NodeJS.ProcessEnv = process.env): string {
  const own = `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`;
  const name = env[own] ? own : env.OTEL_EXPORTER_OTLP_ENDPOINT ? "OTEL_EXPORTER_OTLP_ENDPOINT" : null;
  if (name === null) return `http://localhost:4318/v1/${signal.toLowerCase()}`;
  const value = env[name]!;
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // refused below
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    const example = name === own ? `http://localhost:4318/v1/${signal.toLowerCase()}` : "http://localhost:4318";
    throw new ReqwatchError("BAD_INPUT", `${name}=${value}: not an http(s) URL; write it with its scheme, e.g. ${example}.`);
  }
  return name === own ? value : `${value.replace(/\/+$/, "")}/v1/${signal.toLowerCase()}`;
}

/** Every OTLP variable the export reads, checked before it starts: where traces go, or the first wrong setting, named. */
export function checkOtlpSettings(env: NodeJS.ProcessEnv = process.env): { tracesEndpoint: string } {
  otlpProtocol("TRACES", env);
  if (env.OTEL_METRICS_EXPORTER !== "none") {
    otlpProtocol("METRICS", env);
    otlpEndpoint("METRICS", env);
  }
  return { tracesEndpoint: otlpEndpoint("TRACES", env) };
}
