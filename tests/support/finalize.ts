import { finalizeCapture, type FinalizeCaptureOptions } from '../../src/pipelines/capture/index.js';
import type { Call } from '../../src/schemas/call.js';
import { deliveryOf } from '../../src/harnesses/index.js';
import { attributeCalls } from '../../src/transforms/capture/correlate.js';

/** finalizeCapture over raw calls, attributed first by response id as collect attributes them (tests hold raw calls); the harness's delivery evidence as finalizeNativeCapture takes it. */
export function finalizeAttributed(o: FinalizeCaptureOptions & { calls: readonly Call[] }): ReturnType<typeof finalizeCapture> {
  return finalizeCapture({ ...deliveryOf(o.harness.name), ...o, calls: attributeCalls(o.calls, o.participants) });
}
