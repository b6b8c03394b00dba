import type { StageContext } from './stage.js';

/**
 * A record serialized once, as the bytes of one JSONL line (with its '\n'). Fan-out branches share
 * the same instance, so N sinks cost one JSON.stringify and one UTF-8 encode, not N.
 */
export class EncodedLine {
  private joined: Buffer | undefined;
  /**
   * One buffer, or the line's pieces in order (a call's metadata, then its request context's bytes as
   * read): sinks write pieces as they are, without joining them first.
   */
  constructor(private readonly content: Buffer | readonly Buffer[]) {}

  get bytes(): Buffer {
    if (Buffer.isBuffer(this.content)) return this.content;
    return (this.joined ??= Buffer.concat(this.content as Buffer[]));
  }

  /** The pieces of the line (one for a plain line). */
  get parts(): readonly Buffer[] {
    return Buffer.isBuffer(this.content) ? [this.content] : this.content;
  }

  get byteLength(): number {
    return Buffer.isBuffer(this.content) ? this.content.length : this.content.reduce((n, b) => n + b.length, 0);
  }

  static of(value: unknown): EncodedLine {
    return new EncodedLine(Buffer.from(`${JSON.stringify(value)}\n`, 'utf8'));
  }
}

/** The bytes of one JSONL line for `item`: pre-encoded lines pass as they are. */
export function jsonlBytes(item: unknown): Buffer {
  if (item instanceof EncodedLine) return item.bytes;
  const text = JSON.stringify(item);
  if (text === undefined) throw new TypeError(`cannot encode ${typeof item} as a JSONL line`);
  return Buffer.from(`${text}\n`, 'utf8');
}

/** Serialize once, upstream of a fan-out. Generic so it fits any typed stream (highland's types are invariant). */
export const encodeJsonlLines = async function* encode<T>(input: AsyncIterable<T>, ctx: StageContext): AsyncGenerator<EncodedLine> {
  let n = 0;
  try {
    for await (const item of input) {
      n++;
      yield item instanceof EncodedLine ? item : EncodedLine.of(item);
    }
  } finally {
    ctx.counters.add('encode-jsonl', 'received', n);
    ctx.counters.add('encode-jsonl', 'emitted', n);
  }
};
