/** The OTLP descriptor as scripts/otlp-descriptor.mjs makes it from the vendored .proto files. */
export function otlpDescriptor(): string;
