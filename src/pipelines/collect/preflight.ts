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
    const failure = call.errors.find((e) => e.code === ErrorCode.UPSTREAM_FAILED);
    if (failure) return failure.message;
  }
  return undefined;
}
