import { ErrorCode } from '../../core/errors.js';
import type { MaskingStream, SecretMasker } from '../../core/secret-masker.js';
import type { RecordedError } from '../../schemas/common.js';
import { createStreamDecoder, parseContentEncoding, type StreamDecoder } from '../../transforms/protocols/decode-body.js';

export interface ResponseHead {
  /** Name, value, … as the client gets them. */
  forClient: string[];
  /** As the log records them. */
  recorded: Record<string, string | string[]>;
}

/**
 * A response as the client and the log get it once the credentials an exchange forwarded are masked: header values
 * masked, the body masked as it streams (a secret split across chunks too); a compressed body is decoded first —
 * a coded body cannot be searched — and sent on decoded, up to `maxDecodedBytes`.
 */
export class ResponseMask {
  private readonly masking: MaskingStream;
  private decoder: StreamDecoder | undefined;
  private decoded = 0;

  /**
   * Masks `head` in place. `deliver` takes the masked body bytes in order; `fail` is called once if the body cannot be
   * decoded or decodes past its limit (the exchange is then to be aborted with that error).
   */
  constructor(
    masker: SecretMasker,
    head: ResponseHead,
    private readonly maxDecodedBytes: number,
    private readonly deliver: (chunk: Buffer) => void,
    private readonly fail: (error: RecordedError) => void,
  ) {
    for (let i = 1; i < head.forClient.length; i += 2) head.forClient[i] = masker.maskText(head.forClient[i]!);
    for (const [k, v] of Object.entries(head.recorded)) head.recorded[k] = Array.isArray(v) ? v.map((x) => masker.maskText(x)) : masker.maskText(v);
    this.masking = masker.stream();
    const encoding = head.recorded['content-encoding'];
    const codings = parseContentEncoding(encoding);
    if (codings !== undefined && codings.length === 0) return;
    try {
      this.decoder = createStreamDecoder(encoding, (chunk) => this.takeDecoded(chunk, encoding));
    } catch (err) {
      // A coding roller cannot decode cannot be searched: it is not relayed unsearched.
      this.fail({ code: ErrorCode.BODY_DECODE_FAILED, message: (err as Error).message });
      return;
    }
    dropHeaders(head.forClient, ['content-encoding', 'content-length']);
    delete head.recorded['content-encoding'];
    delete head.recorded['content-length'];
  }

  private takeDecoded(chunk: Buffer, encoding: string | string[] | undefined): void {
    if (this.decoded > this.maxDecodedBytes) return; // failed already
    this.decoded += chunk.length;
    if (this.decoded > this.maxDecodedBytes) {
      return this.fail({ code: ErrorCode.DECODED_BODY_TOO_LARGE, message: `the response decoded past ${this.maxDecodedBytes} bytes (content-encoding ${String(encoding)}); raise maxDecodedResponseBytes` });
    }
    this.deliver(this.masking.push(chunk));
  }

  push(chunk: Buffer): void {
    if (this.decoder) this.decoder.push(chunk);
    else this.deliver(this.masking.push(chunk));
  }

  /** The end of the body: what the decoder and the masking held back. Throws if the coded body was bad. */
  async end(): Promise<void> {
    await this.decoder?.end();
    this.deliver(this.masking.end());
  }
}

export function hasHeader(headers: readonly string[], name: string): boolean {
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === name) return true;
  return false;
}

/** Sets `name` (lower case) to one value, whatever spelling or repeats it had. */
export function setHeader(headers: string[], name: string, value: string): void {
  dropHeaders(headers, [name]);
  headers.push(name, value);
}

function dropHeaders(headers: string[], names: readonly string[]): void {
  for (let i = headers.length - 2; i >= 0; i -= 2) if (names.includes(headers[i]!.toLowerCase())) headers.splice(i, 2);
}
