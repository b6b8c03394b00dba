import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ViewData } from './view-data.js';

const int = (v: string | undefined | null, what: string): number => {
  if (v === undefined || v === null || !/^\d{1,9}$/.test(v)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what}: expected a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
};

/**
 * The view's API: one JSON value per path (`run`, `samples`, `sample/I`, `sample/I/calls`, `sample/I/call/ID`, `sample/I/actf/OFFSET`,
 * `sample/I/sft/OFFSET`, `sample/I/segment/ORDER/OFFSET`, `sample/I/dialogue`). The server answers them; the static
 * export writes each under data/ by the same key. Only `samples` takes query parameters (the server pages and
 * sorts the table; a static export holds it whole).
 */
export async function answer(data: ViewData, key: string, params: URLSearchParams = new URLSearchParams()): Promise<unknown> {
  const p = key.split('/').map((s) => decodeURIComponent(s));
  if (p[0] === 'run' && p.length === 1) {
    await data.refresh();
    return data.run();
  }
  if (p[0] === 'samples' && p.length === 1) {
    await data.refresh();
    return data.samplesPage({
      offset: params.has('offset') ? int(params.get('offset'), 'offset') : 0,
      limit: params.has('limit') ? int(params.get('limit'), 'limit') : undefined,
      sort: params.get('sort') ?? 'index',
      desc: params.get('desc') === '1',
      q: params.get('q') ?? '',
      status: params.get('status') ?? '',
    });
  }
  if (p[0] === 'sample' && p.length >= 2) {
    const index = int(p[1], 'sample');
    if (p.length === 2) return data.sample(index);
    if (p[2] === 'calls' && p.length === 3) return data.calls(index);
    if (p[2] === 'call' && p.length === 4) return data.call(index, p[3]!);
    if (p[2] === 'actf' && p.length === 4) return data.actf(index, int(p[3], 'offset'));
    if (p[2] === 'sft' && p.length === 4) return data.sft(index, int(p[3], 'offset'));
    if (p[2] === 'segment' && p.length === 5) return data.segment(index, int(p[3], 'segment'), int(p[4], 'offset'));
    if (p[2] === 'dialogue' && p.length === 3) return data.dialogue(index);
  }
  throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no such view API path: ${key}`);
}

/** Where the static export keeps a key's answer (and where the page looks for it): data/<key>.js, odd bytes hex-escaped. */
export function staticFileOf(key: string): string {
  return `data/${key.replace(/[^A-Za-z0-9._/-]|\.\./g, (c) => [...Buffer.from(c)].map((b) => `_${b.toString(16).padStart(2, '0')}`).join(''))}.js`;
}
