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
