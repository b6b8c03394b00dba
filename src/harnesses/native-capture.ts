import type { Manifest } from '../schemas/manifest.js';
import type { NativeCapture } from '../schemas/native-capture.js';
import type { ParticipantUsage } from '../schemas/participant-usage.js';

export type { HeaderJoin, NativeCapture, NativeOutputs } from '../schemas/native-capture.js';

/** Claude Code and Codex: per-id evidence on both sides (response id = native message / response id). */
export function perIdNativeCapture(o: {
  harness: Manifest['harness'];
  participants: ParticipantUsage[];
  background: boolean;
  nativeFiles: string[];
  agentPaths?: Readonly<Record<string, string>>;
}): NativeCapture {
  return {
    harness: o.harness,
    participants: o.participants,
    capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: o.background },
    outputs: { method: 'per_id' },
    nativeFiles: o.nativeFiles,
    ...(o.agentPaths ? { agentPaths: o.agentPaths } : {}),
  };
}
