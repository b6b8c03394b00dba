import { StringDecoder } from 'node:string_decoder';

/** One server-sent event (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export interface SseEvent {
  /** The `event:` field, if any (Chat Completions sends none). */
  event: string | undefined;
  /** `data:` lines joined with '\n'. */
  data: string;
  id: string | undefined;
  /** 0-based index of the event in its stream. */
  index: number;
}

export interface SseAnomaly {
  kind: 'event_too_large' | 'unterminated_event';
  detail: string;
}

export interface SseSink {
  event(e: SseEvent): void;
  anomaly(a: SseAnomaly): void;
  /** A comment line (`: keep-alive`); counted, never an event. */
  comment?(): void;
}

export const DEFAULT_MAX_EVENT_BYTES = 16 << 20;

/**
 * Incremental SSE parser: bytes in any chunking, LF / CRLF / CR line ends (a CR at the end of one chunk
 * and an LF at the start of the next are one line end), comments, multi-line data, a BOM at the start.
 * An event over maxEventBytes is reported and skipped up to its blank line — never buffered whole.
 */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private line = '';
  private sawCR = false;
  private first = true;
  private event: string | undefined;
  private dataLines: string[] = [];
  private id: string | undefined;
  private eventChars = 0;
  private skipping = false;
  private count = 0;

  constructor(
    private readonly sink: SseSink,
    private readonly maxEventBytes = DEFAULT_MAX_EVENT_BYTES,
  ) {}

  get events(): number {
    return this.count;
  }

  push(chunk: Buffer | string): void {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // Fast path (nearly every real stream): LF line ends only. indexOf beats a char loop by far.
    if (!this.sawCR && text.indexOf('\r') === -1) {
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        this.takeLine(this.line === '' ? text.slice(start, nl) : this.line + text.slice(start, nl));
        this.line = '';
        start = nl + 1;
      }
      if (start < text.length) this.keepPartial(text.slice(start));
      return;
    }
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 10 && this.sawCR && i === start && this.line === '') {
        // the LF of a CRLF split across chunks (or right after a CR line end)
        this.sawCR = false;
        start = i + 1;
        continue;
      }
      this.takeLine(this.line + text.slice(start, i));
      this.line = '';
      this.sawCR = c === 13;
      if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    if (start < text.length) {
      this.sawCR = false;
      this.keepPartial(text.slice(start));
    }
  }

  /** The start of a line whose end has not arrived; bounded by maxEventBytes. */
  private keepPartial(piece: string): void {
    this.line += piece;
    if (!this.skipping && this.eventChars + this.line.length > this.maxEventBytes) this.tooLarge();
    if (this.skipping) this.line = '';
  }

  /** End of stream: a pending event without its blank line is reported, not dispatched. */
  end(): void {
    const rest = this.decoder.end();
    if (rest) this.push(rest);
    if (this.line !== '') {
      this.takeLine(this.line);
      this.line = '';
    }
    if (this.dataLines.length > 0 || this.event !== undefined) {
      this.sink.anomaly({ kind: 'unterminated_event', detail: `stream ended inside event ${this.count} (no blank line after it)` });
      this.reset();
    }
  }

  private takeLine(line: string): void {
    if (line === '') {
      if (!this.skipping && this.dataLines.length > 0) {
        this.sink.event({ event: this.event, data: this.dataLines.join('\n'), id: this.id, index: this.count++ });
      }
      this.skipping = false;
      this.reset();
      return;
    }
    if (this.skipping) return;
    this.eventChars += line.length;
    if (this.eventChars > this.maxEventBytes) {
      this.tooLarge();
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) {
      this.sink.comment?.();
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
    // 'retry' and unknown fields are ignored, as the spec says
  }

  private tooLarge(): void {
    this.sink.anomaly({
      kind: 'event_too_large',
      detail: `event ${this.count} exceeded maxEventBytes (${this.maxEventBytes}); skipped to its end — raise maxEventBytes if such events are expected`,
    });
    this.skipping = true;
    this.count++;
    this.reset();
  }

  private reset(): void {
    this.event = undefined;
    this.dataLines = [];
    this.id = undefined;
    this.eventChars = 0;
  }
}
