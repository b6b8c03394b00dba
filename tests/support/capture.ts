import { join } from 'node:path';
import { createStageContext } from '../../src/core/index.js';
import type { Call } from '../../src/schemas/index.js';
import { startRecordingProxy } from '../../src/pipelines/proxy.js';
import type { RecordingProxy, RecordingProxyOptions } from '../../src/sources/proxy/index.js';
import { collect } from './http.js';

/**
 * A recording proxy in front of `upstream`, its calls collected as they end. `finish()` closes it (once)
 * and returns the calls; register it as a cleanup so no proxy outlives its test.
 */
export async function startCapture(
  dir: string,
  upstream: string,
  extra: Partial<RecordingProxyOptions> = {},
): Promise<{ proxy: RecordingProxy; outDir: string; finish(): Promise<Call[]> }> {
  const outDir = join(dir, `capture-${Math.random().toString(36).slice(2, 10)}`);
  const proxy = await startRecordingProxy({ upstream, outDir, ...extra });
  const calls = collect(proxy.calls(createStageContext()));
  let closed = false;
  return {
    proxy,
    outDir,
    async finish() {
      if (!closed) {
        closed = true;
        await proxy.close();
      }
      return calls;
    },
  };
}
