import process from "node:process";
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** The most one message may hold; the SDK's own stdio transport has the same limit. */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** How much of a refused message's start and end is kept to find its id. */
const EDGE_BYTES = 256;

/** JSON-RPC's code for a request the server will not take (too large to read). */
const INVALID_REQUEST = -32600;

/**
 * Newline-delimited JSON-RPC over stdin and stdout, like the SDK's StdioServerTransport except for
 * a message over the limit: the SDK's closes the transport, and the server exits 0 with nothing said
 * and the next call never answered. This one answers that message with an error (under its id when
 * its start or end shows one), says so on stderr, skips to the next line and goes on serving.
 */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  #chunks: Buffer[] = [];
  #size = 0;
  /** Set while the rest of an oversized line is skipped: its first bytes and its last ones so far. */
  #refused: { head: Buffer; tail: Buffer; bytes: number } | null = null;
  #closed = false;
  /** Settles when the full output drains. */
  #drained: Promise<void> | null = null;
  readonly #input: Readable;
  readonly #output: Writable;
  readonly #maxBytes: number;
  readonly #warn: (line: string) => void;

  constructor(
    input: Readable = process.stdin,
    output: Writable = process.stdout,
    maxBytes = MAX_MESSAGE_BYTES,
    warn: (line: string) => void = (line) => console.error(line),
  ) {
    this.#input = input;
    this.#output = output;
    this.#maxBytes = maxBytes;
    this.#warn = warn;
  }

  async start(): Promise<void> {
    this.#input.on("data", this.#onData);
    this.#input.on("error", this.#onInputError);
    this.#input.once("end", this.#onEnd);
  }

  /**
   * Answers wait in memory while nobody reads them: so while the output is full, no more input is
   * read (and so no more answered) until it drains. An agent that sends and never reads holds the
   * server at a bounded size, not at a gigabyte of answers.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    if (this.#output.write(serializeMessage(message))) return;
    this.#input.pause();
    // One wait for every answer sent while the output is full (the calls of one chunk of input are
    // answered together): a listener each would be hundreds, and Node warns of a leak on stderr.
    this.#drained ??= new Promise<void>((resolve) =>
      this.#output.once("drain", () => {
        this.#drained = null;
        resolve();
      }),
    );
    await this.#drained;
    if (!this.#closed) this.#input.resume();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off("data", this.#onData);
    this.#input.off("error", this.#onInputError);
    this.#input.off("end", this.#onEnd);
    this.#chunks = [];
    this.#refused = null;
    this.onclose?.();
  }

  readonly #onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onEnd = (): void => {
    void this.close();
  };

  readonly #onData = (chunk: Buffer): void => {
    let rest = chunk;
    while (rest.length > 0 && !this.#closed) {
      const newline = rest.indexOf(0x0a);
      const piece = newline === -1 ? rest : rest.subarray(0, newline);
      rest = newline === -1 ? Buffer.alloc(0) : rest.subarray(newline + 1);
      if (this.#refused) this.#skip(piece);
      else if (this.#size + piece.length > this.#maxBytes) this.#startRefusing(piece);
      else {
        this.#chunks.push(piece);
        this.#size += piece.length;
      }
      if (newline !== -1) this.#endLine();
    }
  };

  #startRefusing(piece: Buffer): void {
    const held = Buffer.concat([...this.#chunks, piece]);
    this.#chunks = [];
    this.#size = 0;
    this.#refused = { head: Buffer.from(held.subarray(0, EDGE_BYTES)), tail: Buffer.alloc(0), bytes: 0 };
    this.#skip(held);
  }

  #skip(piece: Buffer): void {
    const refused = this.#refused!;
    refused.bytes += piece.length;
    refused.tail = Buffer.from(Buffer.concat([refused.tail, piece.subarray(Math.max(0, piece.length - EDGE_BYTES))]).subarray(-EDGE_BYTES));
  }

  #endLine(): void {
    if (this.#refused) {
      const { head, tail, bytes } = this.#refused;
      this.#refused = null;
      this.#refuse(head.toString("utf8"), tail.toString("utf8"), bytes);
      return;
    }
    const line = Buffer.concat(this.#chunks).toString("utf8").replace(/\r$/, "");
    this.#chunks = [];
    this.#size = 0;
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    this.onmessage?.(message);
  }

  #refuse(head: string, tail: string, bytes: number): void {
    const limit = `${Math.round(this.#maxBytes / (1024 * 1024))} MB`;
    const message = `A message of ${(bytes / (1024 * 1024)).toFixed(1)} MB was refused: the limit is ${limit} a message.`;
    this.#warn(`reqwatch mcp: ${message} The server goes on serving.`);
    const id = requestIdOf(head, tail);
    // A notification (no id) gets no answer; a request whose id cannot be seen gets one under id null, as JSON-RPC says.
    if (id === undefined && !/"id"\s*:/.test(head + tail)) return;
    void this.send({ jsonrpc: "2.0", id: id ?? null, error: { code: INVALID_REQUEST, message } } as unknown as JSONRPCMessage);
  }
}

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** The id as the first member, alone or after "jsonrpc" (how most clients write it)... */
const HEAD_ID = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}\s*,`);
/** ...or as the last member of the outermost object (how the SDK's client writes it). */
const TAIL_ID = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);

function requestIdOf(head: string, tail: string): RequestId | undefined {
  const found = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail.replace(/\r$/, ""));
  if (!found) return undefined;
  try {
    return JSON.parse(found[1]!) as RequestId;
  } catch {
    return undefined;
  }
}
