import type { SecretMasker } from '../../core/secret-masker.js';
import type { RecordedError } from '../../schemas/common.js';
import { eventType, leadingType } from './websocket-message-type.js';
import type { EndMeta, RequestMeta, WireLogWriter } from './wire-log.js';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.done', 'error']);
/**
 * A client message up to this size is held whole before any of it is forwarded (its type read by JSON.parse); a
 * larger one is classified by the type its first bytes declare, then recorded and forwarded piece by piece.
 */
export const CLASSIFY_BYTES = 1 << 20;

/** What the session needs to open a call: its request's record, less what only the call knows. */
export type CallMetaBase = Omit<RequestMeta, 'seq' | 'started_at'>;

/**
 * What one relayed Responses-over-WebSocket session writes to the wire log. Each client message that is a request
 * (`response.create`) opens a call, its payload the request body (q, then b pieces when it is large); any other
 * client message is a 'u' frame of the call in progress (or the last). The upstream's text messages while a call is
 * open are its response, one d frame per message, masked whole, until the terminal event ends the call (x).
 */
export class SessionRecording {
  private current: { callId: string; firstByteAt: number | null; errors: RecordedError[] } | undefined;
  private lastCallId: string | undefined;
  /** The client message being read: held until its kind is known, then recorded piece by piece. */
  private message: { binary: boolean; held: Buffer[]; heldBytes: number; as?: { kind: 'q' | 'u'; callId: string; part: number } } | undefined;
  /** The upstream text message being recorded (undefined when none is). */
  private response: Buffer[] | undefined;
  /** Frames appended since the last onDisk(): the client's bytes wait for them. */
  private unflushed = false;

  constructor(
    private readonly wire: WireLogWriter,
    private readonly nextCall: () => { callId: string; seq: number },
    private readonly masker: SecretMasker,
    private readonly base: CallMetaBase,
  ) {}

  /** A client message is being read and not yet classified: its bytes (and any frame after them) are held. */
  get holding(): boolean {
    return this.message !== undefined && this.message.as === undefined;
  }

  clientMessage(binary: boolean): void {
    this.message = { binary, held: [], heldBytes: 0 };
  }

  /** A piece of the client message (unmasked); `end` on its last. */
  clientPiece(data: Buffer, end: boolean): void {
    const m = this.message!;
    if (m.as) return this.recordPiece(m.as, data, m.binary, end);
    m.held.push(data);
    m.heldBytes += data.length;
    if (!end && m.heldBytes < CLASSIFY_BYTES) return;
    const prefix = m.held.length === 1 ? m.held[0]! : Buffer.concat(m.held);
    m.held = [];
    const type = m.binary ? '' : end ? eventType(prefix) : leadingType(prefix);
    if (type === 'response.create') {
      if (this.current) this.end({ clientAborted: true }); // a new request before the last one ended
      const { callId, seq } = this.nextCall();
      this.current = { callId, firstByteAt: null, errors: [] };
      this.lastCallId = callId;
      m.as = { kind: 'q', callId, part: 0 };
      const meta: RequestMeta = { ...this.base, seq, started_at: Date.now() };
      if (end && prefix.length <= CLASSIFY_BYTES) {
        this.append(callId, 'q', meta, prefix);
        this.endMessage();
      } else {
        // As a streamed HTTP body is: q with the first bytes, b pieces, b end (readers join them).
        this.append(callId, 'q', { ...meta, body_streamed: true }, prefix);
        if (end) this.recordPiece(m.as, Buffer.alloc(0), false, true);
      }
      return;
    }
    this.lastCallId ??= this.nextCall().callId;
    m.as = { kind: 'u', callId: this.current?.callId ?? this.lastCallId, part: -1 };
    this.recordPiece(m.as, prefix, m.binary, end);
  }

  private recordPiece(as: { kind: 'q' | 'u'; callId: string; part: number }, data: Buffer, binary: boolean, end: boolean): void {
    if (as.kind === 'q') {
      if (data.length > 0) this.append(as.callId, 'b', undefined, data);
      if (end) {
        this.append(as.callId, 'b', { end: true });
        this.endMessage();
      }
      return;
    }
    as.part++;
    const whole = end && as.part === 0;
    this.append(as.callId, 'u', { binary, at: Date.now(), ...(whole ? {} : { part: as.part, ...(end ? { last: true } : {}) }) }, data);
    if (end) this.message = undefined;
  }

  /** A request's body is whole: the response begins (status 101, the session's). */
  private endMessage(): void {
    const as = this.message?.as;
    this.message = undefined;
    if (as?.kind === 'q') this.append(as.callId, 'r', { status: 101, headers: {} });
  }

  /** An upstream data message begins: recorded when it is text and a call is open. */
  upstreamMessage(text: boolean): void {
    this.response = text && this.current ? [] : undefined;
    if (this.response && this.current) this.current.firstByteAt ??= Date.now();
  }

  /** A piece of it (as the upstream sent it); `end` on its last: the message, masked whole, is one d frame. */
  upstreamPiece(data: Buffer, end: boolean): void {
    if (!this.response) return;
    this.response.push(data);
    if (!end) return;
    const message = this.masker.maskBytes(this.response.length === 1 ? this.response[0]! : Buffer.concat(this.response));
    this.response = undefined;
    if (!this.current) return;
    this.append(this.current.callId, 'd', undefined, message);
    if (TERMINAL.has(eventType(message))) this.end({ upstreamEnded: true });
  }

  /** The call in progress ends (the session closed, or a new request came first). */
  end(how: { upstreamEnded?: boolean; clientAborted?: boolean; upstreamError?: string }): void {
    if (!this.current) return;
    const { callId, firstByteAt, errors } = this.current;
    this.current = undefined;
    this.response = undefined;
    const upstreamError = how.upstreamError === undefined ? null : this.masker.maskText(how.upstreamError);
    const meta: EndMeta = { first_byte_at: firstByteAt, ended_at: Date.now(), upstream_ended: how.upstreamEnded ?? false, client_aborted: how.clientAborted ?? false, upstream_error: upstreamError, errors: this.masker.maskValue(errors) };
    this.append(callId, 'x', meta);
  }

  /** Resolves once everything appended so far is on disk (at once when nothing was). */
  async onDisk(): Promise<void> {
    if (!this.unflushed) return;
    this.unflushed = false;
    if (!this.wire.flushNow()) await this.wire.flushed();
  }

  private append(...args: Parameters<WireLogWriter['append']>): void {
    this.wire.append(...args);
    this.unflushed = true;
  }
}
