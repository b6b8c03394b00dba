// Generated from tests/fixtures/versions by `roller verify --versions … --record` (publishMatrix): do not edit.

export interface VerifiedVersion {
  version: string;
  /** The day its fixtures were recorded. */
  verified_at: string;
  scenarios: Record<string, 'pass' | 'fail' | 'not_applicable' | 'not_run'>;
}

export const VERIFIED_VERSIONS: Readonly<Record<string, readonly VerifiedVersion[]>> = {};
