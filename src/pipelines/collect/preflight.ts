import { request } from 'undici';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { Call } from '../../schemas/call.js';
import { printableUpstream } from '../../sources/proxy/request-target.js';
import type { ResolvedModel } from './models.js';

/**
 * Each API model's base answers before the first sample runs: any HTTP answer (401, 404 included) is a server there;
 * a refused connection, an unknown host or silence is a clear error now, not a --timeout spent per sample.
 */
export async function checkModelApis(models: readonly ResolvedModel[], timeoutMs = 10_000, named = (m: ResolvedModel) => `--model ${m.id}`): Promise<void> {
  for (const m of models) {
    if (m.kind !== 'api') continue;
    try {
      const res = await request(m.apiBase, { method: 'HEAD', headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
      await res.body.dump();
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string } };
      const why = e.cause?.code ?? e.code ?? e.message;
      throw new RollerError(ErrorCode.INVALID_OPTIONS, `${named(m)}: the model API at ${printableUpstream(m.apiBase)} cannot be reached (${why}); nothing was run. Check its api_base in --model-config and that the server is up`);
    }
  }
}

/** The first call of a capture whose upstream connection failed, as its error says it (for the sample's error). */
export function firstUpstreamFailure(calls: readonly Call[]): string | undefined {
  for (const call of calls) {
    // Never reached (the proxy's connect failed); a response cut mid-way is lastCallFailure's.
    const failure = call.errors.find((e) => e.code === ErrorCode.UPSTREAM_FAILED && e.message.startsWith('connecting to '));
    if (failure) return failure.message;
  }
  return undefined;
}

/**
 * The model API's failure a harness gave up on: the last model call of the attempt failed (an HTTP error, a stream cut
 * mid-answer, no answer at all) and nothing succeeded after it. Named as the user looks it up in calls.jsonl, with the
 * upstream's status and message, and how many calls failed before it (the harness's own retries, each recorded).
 * undefined: the last model call ended well (a failure the harness retried past is no sample error).
 */
export function lastCallFailure(calls: readonly Call[]): string | undefined {
  const model = calls.filter((c) => c.protocol !== 'other').sort((a, b) => a.seq - b.seq);
  const last = model.at(-1);
  if (!last || last.execution_status !== 'failed') return undefined;
  const earlier = model.slice(0, -1).filter((c) => c.execution_status === 'failed').length;
  const why = last.status_reasons.execution_status ?? (last.http_status === null ? 'no response' : `HTTP ${last.http_status}`);
  const cut = last.errors.find((e) => e.code === ErrorCode.UPSTREAM_FAILED)?.message;
  return `the model API failed call ${last.seq} (${last.method} ${last.path}${last.http_status !== null ? `, HTTP ${last.http_status}` : ''}): ${why}${cut && !why.includes(cut) ? `; ${cut}` : ''}${earlier > 0 ? `; ${earlier} earlier call${earlier === 1 ? '' : 's'} of this attempt failed too (the harness's retries, each in calls.jsonl)` : ''}`;
}
