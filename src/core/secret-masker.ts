import { decodedView, type DecodedView } from './secret-view.js';

/**
 * Replaces known secret values (the credentials a proxy forwarded) in bytes and strings, in every form an echo can
 * take: the value itself, JSON-`\u`-escaped or URL-encoded (any mix, char by char), its base64 (standard or URL-safe,
 * at any alignment, whole), and any piece of PIECE_CHARS or more of what follows its public prefix (`sk-ant-api03-`). Each
 * occurrence becomes a mask of the same byte length (`REDACTED****…`), so a Content-Length stays true and offsets into
 * a log stay valid. Values shorter than MIN_SECRET_BYTES are not masked: they would erase ordinary text.
 */
export const MIN_SECRET_BYTES = 8;
/** A piece of a secret this long (past its public prefix) is masked wherever it appears. */
export const PIECE_CHARS = 12;

/** One form a secret can be written in: the public prefix (masked only beside the rest) and the private part. */
interface Form {
  prefix: string;
  body: string;
  /** The shortest run of `body` that counts as the secret: PIECE_CHARS, or all of a shorter body. */
  window: number;
  /** Positions in `body` searched for first: every window holds one whole (stride 8, ANCHOR long). */
  anchors: number[];
  /** How long each anchor is: ANCHOR, or the whole body where only the whole counts. */
  anchorLength: number;
}

const ANCHOR = 4;

export class SecretMasker {
  private readonly values: string[];
  private readonly forms: Form[];
  private readonly longest: number;

  constructor(values: Iterable<string | undefined>) {
    const unique = new Set<string>();
    for (const v of values) if (v !== undefined && Buffer.byteLength(v) >= MIN_SECRET_BYTES) unique.add(v);
    this.values = [...unique];
    // Secrets are searched as their UTF-8 bytes read one char per byte (latin1): one domain for bytes and text alike.
    this.forms = this.values.flatMap((v) => formsOf(Buffer.from(v).toString('latin1')));
    this.longest = Math.max(0, ...this.forms.map((f) => f.prefix.length + f.body.length));
  }

  get empty(): boolean {
    return this.forms.length === 0;
  }

  /** A masker that knows these values too. */
  with(values: Iterable<string | undefined>): SecretMasker {
    return new SecretMasker([...this.values, ...values]);
  }

  /** `buf` with every secret masked; the same Buffer when none occurs. */
  maskBytes(buf: Buffer): Buffer {
    if (this.empty || buf.length === 0) return buf;
    const text = buf.toString('latin1');
    const ranges = this.find(decodedView(text));
    if (ranges.length === 0) return buf;
    const out = Buffer.from(buf);
    for (const [from, to] of ranges) maskOf(to - from).copy(out, from);
    return out;
  }

  maskText(text: string): string {
    if (this.empty || text.length === 0) return text;
    // A JS string's secrets are ASCII in practice; one with other characters is searched as its UTF-8 bytes.
    // eslint-disable-next-line no-control-regex
    if (/[^\u0000-\u00ff]/.test(text)) return this.maskBytes(Buffer.from(text)).toString();
    const ranges = this.find(decodedView(text));
    if (ranges.length === 0) return text;
    let out = '';
    let at = 0;
    for (const [from, to] of ranges) {
      out += text.slice(at, from) + maskOf(to - from).toString('latin1');
      at = to;
    }
    return out + text.slice(at);
  }

  /** Every string in a JSON-like value masked (a new value; the input is not changed). */
  maskValue<T>(value: T): T {
    if (this.empty) return value;
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
   * be part of a secret (or an escape cut short) is held back until the next chunk (or the end), so a stream whose
   * chunks end in anything else — an SSE event's blank line — passes without delay.
   */
  stream(): MaskingStream {
    return new MaskingStream(this);
  }

  /** Ranges [from, to) of `view.text` that hold a secret in any form, sorted and merged. */
  private find(view: DecodedView): [number, number][] {
    const found: [number, number][] = [];
    const d = view.decoded;
    for (const form of this.forms) {
      for (const p of form.anchors) {
        const anchor = form.body.slice(p, p + form.anchorLength);
        for (let h = d.indexOf(anchor); h !== -1; h = d.indexOf(anchor, h + 1)) {
          let left = 0;
          while (p - left > 0 && h - left > 0 && d[h - left - 1] === form.body[p - left - 1]) left++;
          let right = p + anchor.length;
          let at = h + anchor.length;
          while (right < form.body.length && at < d.length && d[at] === form.body[right]) right++, at++;
          if (right - (p - left) < form.window) continue;
          let start = h - left;
          // The whole secret: its public prefix goes with it.
          if (p - left === 0 && form.prefix !== '' && d.endsWith(form.prefix, start)) start -= form.prefix.length;
          found.push([view.start(start), view.end(at - 1)]);
        }
      }
    }
    return merge(found);
  }

  /**
   * `text` split for a stream: where the bytes to hold back begin (a tail that may continue a secret, or an escape cut
   * short), and the secrets found before that point.
   */
  split(text: string): { hold: number; ranges: [number, number][] } {
    if (this.empty) return { hold: text.length, ranges: [] };
    const whole = decodedView(text);
    // The longest decoded suffix before a cut escape that is a run of some form (a longer suffix that is one contains
    // the shorter).
    const view = whole.cutEscape === text.length ? whole : decodedView(text.slice(0, whole.cutEscape));
    const d = view.decoded;
    let k = 0;
    while (k < Math.min(this.longest, d.length) && this.forms.some((f) => (f.prefix + f.body).includes(d.slice(d.length - k - 1)))) k++;
    let hold = k === 0 ? whole.cutEscape : view.start(d.length - k);
    const ranges = this.find(whole);
    // A secret found that reaches into the held tail is held whole, so the next chunk finds it again.
    for (const [a, b] of ranges) if (b > hold && a < hold) hold = a;
    return { hold, ranges: ranges.filter(([, b]) => b <= hold) };
  }

  /** `text` (latin1) with these ranges masked, as bytes. */
  static masked(text: string, ranges: readonly [number, number][]): Buffer {
    const out = Buffer.from(text, 'latin1');
    for (const [from, to] of ranges) maskOf(to - from).copy(out, from);
    return out;
  }
}

export class MaskingStream {
  private carry = '';

  constructor(private readonly masker: SecretMasker) {}

  /** The bytes that can go on now (possibly empty). */
  push(chunk: Buffer): Buffer {
    if (this.masker.empty) return chunk;
    const joined = this.carry + chunk.toString('latin1');
    const { hold, ranges } = this.masker.split(joined);
    this.carry = joined.slice(hold);
    return SecretMasker.masked(joined.slice(0, hold), ranges);
  }

  /** What was held back, at the end of the stream (masked: it may hold a piece of a secret). */
  end(): Buffer {
    const rest = this.carry;
    this.carry = '';
    return this.masker.maskBytes(Buffer.from(rest, 'latin1'));
  }
}

/** The forms of one secret (latin1 text): itself, and its base64 and base64url at each of the three alignments. */
function formsOf(secret: string): Form[] {
  const prefix = publicPrefix(secret);
  const forms = [form(prefix, secret.slice(prefix.length))];
  const bytes = Buffer.from(secret, 'latin1');
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // Characters that also encode the unknown bytes before (shift) or after (the last partial group) are not the secret's.
    const first = Math.ceil((shift * 8) / 6);
    const last = Math.floor(((shift + bytes.length) * 8) / 6);
    const core = b64.slice(first, last);
    if (core.length < PIECE_CHARS) continue;
    // Whole only: a piece of an encoding is not a piece of the key (and one search per form keeps masking fast).
    forms.push(form('', core, false));
    const url = core.replace(/\+/g, '-').replace(/\//g, '_');
    if (url !== core) forms.push(form('', url, false));
  }
  return forms;
}

function form(prefix: string, body: string, pieces = true): Form {
  if (!pieces || body.length < PIECE_CHARS) return { prefix, body, window: body.length, anchors: [0], anchorLength: body.length };
  const anchors: number[] = [];
  for (let p = 0; p <= body.length - ANCHOR; p += 8) anchors.push(p);
  return { prefix, body, window: PIECE_CHARS, anchors, anchorLength: ANCHOR };
}

/**
 * The public part a key begins with (`sk-`, `sk-ant-api03-`, `roller-stand-in-`): words of letters and digits each
 * ending in - or _, kept only when PIECE_CHARS or more characters follow (else the whole value is the private part).
 */
function publicPrefix(secret: string): string {
  const m = /^(?:[A-Za-z][A-Za-z0-9]{0,11}[-_]){1,3}/.exec(secret);
  if (!m) return '';
  return secret.length - m[0].length >= PIECE_CHARS ? m[0] : '';
}

function merge(ranges: [number, number][]): [number, number][] {
  if (ranges.length <= 1) return ranges;
  ranges.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [ranges[0]!];
  for (const r of ranges.slice(1)) {
    const last = out[out.length - 1]!;
    if (r[0] < last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push(r);
  }
  return out;
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
