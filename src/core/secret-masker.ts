/**
 * Replaces known secret values (the credentials a proxy forwarded) in bytes and strings. Each occurrence becomes a
 * mask of the same byte length (`REDACTED****…`), so a Content-Length stays true and offsets into a log stay valid.
 * Values shorter than MIN_SECRET_BYTES are not masked: they would erase ordinary text, and are not credentials.
 */
export const MIN_SECRET_BYTES = 8;

export class SecretMasker {
  private readonly secrets: Buffer[];

  constructor(values: Iterable<string | undefined>) {
    const unique = new Set<string>();
    for (const v of values) if (v !== undefined && Buffer.byteLength(v) >= MIN_SECRET_BYTES) unique.add(v);
    // Longest first: a secret that contains another is masked whole.
    this.secrets = [...unique].map((v) => Buffer.from(v)).sort((a, b) => b.length - a.length);
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  /** A masker that knows these values too. */
  with(values: Iterable<string | undefined>): SecretMasker {
    return new SecretMasker([...this.secrets.map((s) => s.toString()), ...values]);
  }

  /** `buf` with every secret masked; the same Buffer when none occurs. */
  maskBytes(buf: Buffer): Buffer {
    let out: Buffer | undefined;
    for (const secret of this.secrets) {
      let at = (out ?? buf).indexOf(secret);
      while (at !== -1) {
        out ??= Buffer.from(buf);
        maskOf(secret.length).copy(out, at);
        at = out.indexOf(secret, at + secret.length);
      }
    }
    return out ?? buf;
  }

  maskText(text: string): string {
    if (this.secrets.length === 0) return text;
    let out = text;
    for (const secret of this.secrets) {
      const s = secret.toString();
      if (out.includes(s)) out = out.split(s).join(maskOf(secret.length).toString());
    }
    return out;
  }

  /** Every string in a JSON-like value masked (a new value; the input is not changed). */
  maskValue<T>(value: T): T {
    if (this.secrets.length === 0) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.maskText(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [this.maskText(k), walk(x)]));
      return v;
    };
    return walk(value) as T;
  }

  /**
   * A stream of chunks masked as a whole: a secret split across chunks is masked too. Only a chunk's tail that could
   * begin a secret is held back until the next chunk (or the end), so a stream whose chunks end in anything else —
   * an SSE event's blank line — passes without delay.
   */
  stream(): MaskingStream {
    return new MaskingStream(this);
  }

  /** The length of the longest suffix of `buf` that is a proper prefix of some secret (0: nothing to hold back). */
  heldTail(buf: Buffer): number {
    let best = 0;
    for (const secret of this.secrets) {
      const max = Math.min(secret.length - 1, buf.length);
      for (let n = max; n > best; n--) {
        if (buf.compare(secret, 0, n, buf.length - n, buf.length) === 0) {
          best = n;
          break;
        }
      }
    }
    return best;
  }
}

export class MaskingStream {
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly masker: SecretMasker) {}

  /** The bytes that can go on now (possibly empty). */
  push(chunk: Buffer): Buffer {
    if (this.masker.empty) return chunk;
    const joined = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    const masked = this.masker.maskBytes(joined);
    const hold = this.masker.heldTail(masked);
    this.carry = hold === 0 ? Buffer.alloc(0) : Buffer.from(masked.subarray(masked.length - hold));
    return hold === 0 ? masked : masked.subarray(0, masked.length - hold);
  }

  /** What was held back, at the end of the stream (it begins a secret but never completed one). */
  end(): Buffer {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    return rest;
  }
}

const masks = new Map<number, Buffer>();
function maskOf(length: number): Buffer {
  let m = masks.get(length);
  if (!m) {
    m = Buffer.from(('REDACTED' + '*'.repeat(Math.max(0, length - 8))).slice(0, length));
    masks.set(length, m);
  }
  return m;
}
