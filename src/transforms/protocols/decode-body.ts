import { Decompress as ZstdDecompress, decompress as zstdDecompress } from 'fzstd';
import type { Transform as ZlibTransform } from 'node:stream';
import { brotliDecompressSync, createBrotliDecompress, createGunzip, createInflate, gunzipSync, inflateSync } from 'node:zlib';
import { ErrorCode, RollerError } from '../../core/errors.js';

/** Content codings roller decodes (Node 20's zlib has no zstd: fzstd, a pure-JS decoder, does it). */
export type ContentCoding = 'identity' | 'gzip' | 'deflate' | 'br' | 'zstd';

/** The codings of a Content-Encoding header, in the order they were applied; undefined if one is unknown. */
export function parseContentEncoding(header: string | string[] | undefined): ContentCoding[] | undefined {
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  const codings: ContentCoding[] = [];
  for (const part of raw.split(',')) {
    const c = part.trim().toLowerCase();
    if (c === '' || c === 'identity') continue;
    if (c === 'gzip' || c === 'x-gzip') codings.push('gzip');
    else if (c === 'deflate' || c === 'br' || c === 'zstd') codings.push(c);
    else return undefined;
  }
  return codings;
}

/** What a decoded body may grow to (a 4 MB gzip bomb inflates to 4 GiB): past it, a decode error that says so. */
export const MAX_DECODED_BODY_BYTES = 256 << 20;

/** Decode a whole body (request bodies are bounded by the proxy's maxRequestBytes; their decoding by maxOutputLength). */
export function decodeBody(body: Buffer, header: string | string[] | undefined, maxOutputLength = MAX_DECODED_BODY_BYTES): Buffer {
  const codings = parseContentEncoding(header);
  if (codings === undefined) {
    throw new RollerError(ErrorCode.BODY_DECODE_FAILED, `unsupported content-encoding '${String(header)}'; the body is forwarded but not recorded as JSON`);
  }
  let out = body;
  try {
    for (const c of [...codings].reverse()) {
      if (c === 'gzip') out = gunzipSync(out, { maxOutputLength });
      else if (c === 'deflate') out = inflateSync(out, { maxOutputLength });
      else if (c === 'br') out = brotliDecompressSync(out, { maxOutputLength });
      else if (c === 'zstd') {
        out = Buffer.from(zstdDecompress(out));
        if (out.length > maxOutputLength) throw new RangeError(`Cannot create a Buffer larger than ${maxOutputLength} bytes`);
      }
    }
  } catch (cause) {
    const tooLarge = (cause as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || cause instanceof RangeError;
    if (tooLarge) throw new RollerError(ErrorCode.DECODED_BODY_TOO_LARGE, `content-encoding '${String(header)}': the body decodes past ${maxOutputLength} bytes; it was forwarded, its decoded JSON is not recorded`, { cause });
    throw new RollerError(ErrorCode.BODY_DECODE_FAILED, `content-encoding '${String(header)}' could not be decoded (${(cause as Error).message})`, { cause });
  }
  return out;
}

/**
 * Incremental decoder for a response copy: push compressed chunks, get decoded ones through `onData`
 * in order. Used on the recorder's copy only; the client always gets the bytes as sent.
 */
export interface StreamDecoder {
  push(chunk: Buffer): void;
  end(): Promise<void>;
}

export function createStreamDecoder(header: string | string[] | undefined, onData: (chunk: Buffer) => void): StreamDecoder {
  const codings = parseContentEncoding(header);
  if (codings === undefined) throw new RollerError(ErrorCode.BODY_DECODE_FAILED, `unsupported content-encoding '${String(header)}'`);
  if (codings.length === 0) return { push: onData, end: async () => {} };
  if (codings.length > 1) throw new RollerError(ErrorCode.BODY_DECODE_FAILED, `stacked content-encodings '${String(header)}' are not decoded on responses`);
  const coding = codings[0]!;
  if (coding === 'zstd') {
    const z = new ZstdDecompress((data) => onData(Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
    return {
      push: (chunk) => z.push(chunk),
      end: async () => z.push(new Uint8Array(0), true),
    };
  }
  const stream: ZlibTransform = coding === 'gzip' ? createGunzip() : coding === 'deflate' ? createInflate() : createBrotliDecompress();
  stream.on('data', onData);
  const done = new Promise<void>((resolve, reject) => {
    stream.once('end', resolve);
    stream.once('error', reject);
  });
  done.catch(() => {});
  return {
    push: (chunk) => void stream.write(chunk),
    end: async () => {
      stream.end();
      await done;
    },
  };
}
