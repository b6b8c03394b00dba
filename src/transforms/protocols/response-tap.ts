import type { IncomingHttpHeaders } from 'node:http';
import { ErrorCode } from '../../core/errors.js';
import type { RecordedError } from '../../schemas/common.js';
import { createStreamDecoder, type StreamDecoder } from './decode-body.js';
import { SseParser } from './sse-parser.js';
import type { DecodedResponse, ResponseDecoder } from './types.js';

export interface ResponseTapOptions {
  maxJsonBytes: number;
  maxEventBytes?: number;
  onError(e: RecordedError): void;
}

/**
 * The recorder's copy of a response: content-decoded, then SSE-parsed event by event, or collected
 * (bounded) and parsed as one JSON body. Never touches what the client receives.
 */
export class ResponseTap {
  private readonly sse: SseParser | undefined;
  private readonly json: Buffer[] = [];
  private jsonBytes = 0;
  private jsonOverflow = false;
  private readonly content: StreamDecoder | undefined;

  constructor(
    private readonly decoder: ResponseDecoder | undefined,
    headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
    private readonly options: ResponseTapOptions,
  ) {
    if (!decoder) return;
    const type = String(headers['content-type'] ?? '');
    if (/text\/event-stream/i.test(type)) {
      this.sse = new SseParser({ event: (e) => decoder.event(e), anomaly: (a) => decoder.sseAnomaly(a) }, options.maxEventBytes);
    }
    try {
      this.content = createStreamDecoder(headers['content-encoding'], (chunk) => this.take(chunk));
    } catch (err) {
      options.onError({ code: ErrorCode.BODY_DECODE_FAILED, message: `response not decoded: ${(err as Error).message}` });
    }
  }

  push(chunk: Buffer): void {
    this.content?.push(chunk);
  }

  private take(chunk: Buffer): void {
    if (this.sse) return this.sse.push(chunk);
    if (this.jsonOverflow) return;
    this.jsonBytes += chunk.length;
    if (this.jsonBytes > this.options.maxJsonBytes) {
      this.jsonOverflow = true;
      this.json.length = 0;
      this.options.onError({ code: ErrorCode.BODY_DECODE_FAILED, message: `JSON response over ${this.options.maxJsonBytes} bytes: kept raw, not decoded` });
      return;
    }
    this.json.push(Buffer.from(chunk));
  }

  async finish(): Promise<DecodedResponse | null> {
    if (!this.decoder) return null;
    try {
      await this.content?.end();
    } catch (err) {
      this.options.onError({ code: ErrorCode.BODY_DECODE_FAILED, message: `response content-encoding: ${(err as Error).message}` });
    }
    if (this.sse) this.sse.end();
    else if (!this.jsonOverflow && this.jsonBytes > 0) {
      const text = Buffer.concat(this.json).toString('utf8');
      try {
        this.decoder.json(JSON.parse(text));
      } catch {
        this.options.onError({ code: ErrorCode.BODY_DECODE_FAILED, message: `response body is neither SSE nor JSON (${this.jsonBytes} bytes, kept raw)` });
      }
    }
    return this.decoder.finish();
  }
}
