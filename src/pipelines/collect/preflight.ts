import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { ErrorCode, RollerError } from '../../core/errors.js';
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
export async function firstUpstreamFailure(callsPath: string): Promise<string | undefined> {
  if (!existsSync(callsPath)) return undefined;
  // Line by line: a capture's calls.jsonl holds every request body; only failed calls' lines are parsed.
  for await (const line of createInterface({ input: createReadStream(callsPath), crlfDelay: Infinity })) {
    if (!line.includes(ErrorCode.UPSTREAM_FAILED)) continue;
    try {
      const call = JSON.parse(line) as { errors?: { code: string; message: string }[] };
      const failure = call.errors?.find((e) => e.code === ErrorCode.UPSTREAM_FAILED);
      if (failure) return failure.message;
    } catch {
      // a cut last line: the next failure, if any, says it
    }
  }
  return undefined;
}
