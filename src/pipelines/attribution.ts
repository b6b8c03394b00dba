import type { HarnessAdapter, CaptureInput } from '../harnesses/adapter.js';
import { perIdNativeCapture } from '../harnesses/native-capture.js';
import type { Call } from '../schemas/call.js';
import type { NativeCapture } from '../schemas/native-capture.js';
import { callCorrelator } from '../transforms/capture/correlate.js';

export interface Attribution {
  /** The adapter's capture contract for the session: participants, coverage, and the joins its harness offers. */
  native: NativeCapture;
  /** Attributes one call (participant, identity and export status), from itself and the native evidence alone. */
  attribute(call: Call): Call;
}

/**
 * The one place calls are attributed (seeds/000), for collect, reprocess, convert and verify alike: each harness states
 * its joins once, in its adapter's capture contract (response id; its identity header; the sole participant where its
 * records name neither), and a call whose output a native record holds (a compaction summary) joins that record's
 * participant. An adapter without a contract gets the response-id join alone.
 */
export async function attributionOf(adapter: HarnessAdapter, input: CaptureInput, recordedOutputs?: NativeCapture['recordedOutputs']): Promise<Attribution> {
  const native = adapter.nativeCapture
    ? await adapter.nativeCapture(input)
    : perIdNativeCapture({ harness: { name: adapter.name, version: input.version }, participants: [...input.session.participants], background: false, nativeFiles: [] });
  if (recordedOutputs) native.recordedOutputs = recordedOutputs;
  return { native, attribute: callCorrelator(native) };
}
