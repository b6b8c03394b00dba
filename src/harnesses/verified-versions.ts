// Generated from tests/fixtures/versions by `roller verify --versions … --record` (publishMatrix): do not edit.

export interface VerifiedVersion {
  version: string;
  /** The day npm published it (null when the registry could not say). */
  released_at: string | null;
  /** The day its fixtures were recorded. */
  verified_at: string;
  scenarios: Record<string, 'pass' | 'fail' | 'not_applicable' | 'not_run'>;
}

export const VERIFIED_VERSIONS: Readonly<Record<string, readonly VerifiedVersion[]>> = {
  "claude-code": [
    {"version":"2.0.0","released_at":"2025-09-29","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"pass","parallel sub-agents":"fail"}},
    {"version":"2.0.10","released_at":"2025-10-07","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"fail","parallel sub-agents":"fail"}},
    {"version":"2.0.20","released_at":"2026-08-19","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"fail","parallel sub-agents":"fail"}},
    {"version":"2.0.30","released_at":"2026-07-23","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"fail","parallel sub-agents":"fail"}},
    {"version":"2.0.50","released_at":"2025-11-22","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"fail","parallel sub-agents":"fail"}},
    {"version":"2.0.61","released_at":"2025-12-07","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"fail","parallel sub-agents":"fail"}},
    {"version":"2.0.75","released_at":"2025-12-20","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"fail","parallel sub-agents":"fail"}},
    {"version":"2.1.0","released_at":"2026-03-03","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"fail","parallel sub-agents":"fail"}},
    {"version":"2.1.20","released_at":"2026-05-04","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"fail"}},
    {"version":"2.1.36","released_at":"2026-02-10","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"fail","a tool call":"pass","parallel sub-agents":"fail"}},
    {"version":"2.1.50","released_at":"2026-03-04","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"fail"}},
    {"version":"2.1.76","released_at":"2026-03-14","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.92","released_at":"2026-04-04","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.114","released_at":"2026-04-18","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.140","released_at":"2026-05-12","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.168","released_at":"2026-06-07","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.197","released_at":"2026-06-30","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.211","released_at":"2026-07-15","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.225","released_at":"2026-08-08","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.257","released_at":"2026-09-01","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.285","released_at":"2026-09-29","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"fail","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.309","released_at":"2026-10-22","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"pass","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"2.1.332","released_at":"2026-11-24","verified_at":"2026-12-03","scenarios":{"a background sub-agent":"pass","a single sub-agent":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
  ],
  "codex": [
    {"version":"0.20.0","released_at":"2025-08-09","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"fail","parallel sub-agents":"not_applicable"}},
    {"version":"0.25.0","released_at":"2026-05-14","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"fail","parallel sub-agents":"not_applicable"}},
    {"version":"0.29.0","released_at":"2026-08-22","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"fail","parallel sub-agents":"not_applicable"}},
    {"version":"0.34.0","released_at":"2026-05-08","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.40.0","released_at":"2026-09-16","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.45.0","released_at":"2026-05-13","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.50.0","released_at":"2026-07-19","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a single sub-agent (multi_agent v2 warm fork)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.55.0","released_at":"2026-05-07","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.60.1","released_at":"2026-05-04","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.66.0","released_at":"2026-05-16","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.75.0","released_at":"2026-06-11","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.80.0","released_at":"2026-05-07","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.90.0","released_at":"2026-08-23","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.100.0","released_at":"2026-09-16","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.110.0","released_at":"2026-03-07","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"not_applicable","a tool call":"pass","parallel sub-agents":"not_applicable"}},
    {"version":"0.120.0","released_at":"2026-07-11","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"fail","a single sub-agent (multi_agent v2 warm fork)":"fail","a tool call":"pass","parallel sub-agents":"fail"}},
    {"version":"0.130.0","released_at":"2026-05-15","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"fail","a single sub-agent (multi_agent v2 warm fork)":"fail","a tool call":"pass","parallel sub-agents":"fail"}},
    {"version":"0.140.0","released_at":"2026-06-16","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"pass","a single sub-agent (multi_agent v2 warm fork)":"fail","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"0.150.0","released_at":"2026-09-16","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"pass","a single sub-agent (multi_agent v2 warm fork)":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"0.160.0","released_at":"2026-10-01","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"pass","a single sub-agent (multi_agent v2 warm fork)":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"0.165.0","released_at":"2026-10-27","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"pass","a single sub-agent (multi_agent v2 warm fork)":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"0.169.1","released_at":"2026-11-17","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"pass","a single sub-agent (multi_agent v2 warm fork)":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
    {"version":"0.171.0","released_at":"2026-11-20","verified_at":"2026-12-03","scenarios":{"a single sub-agent (multi_agent v1)":"pass","a single sub-agent (multi_agent v2 warm fork)":"pass","a tool call":"pass","parallel sub-agents":"pass"}},
  ],
  "deepseek": [
    {"version":"0.1.0-rc.8","released_at":"2026-08-24","verified_at":"2026-12-04","scenarios":{"a single sub-agent":"pass","a tool call":"pass"}},
  ],
  "hermes": [
    {"version":"0.15.0","released_at":"2026-05-28","verified_at":"2026-12-07","scenarios":{"a single sub-agent":"not_applicable","a tool call":"pass"}},
    {"version":"0.16.0","released_at":"2026-06-06","verified_at":"2026-12-07","scenarios":{"a single sub-agent":"not_applicable","a tool call":"pass"}},
    {"version":"0.17.0","released_at":"2026-06-19","verified_at":"2026-12-07","scenarios":{"a single sub-agent":"not_applicable","a tool call":"pass"}},
    {"version":"0.18.2","released_at":"2026-07-08","verified_at":"2026-12-07","scenarios":{"a single sub-agent":"not_applicable","a tool call":"pass"}},
    {"version":"0.19.0","released_at":"2026-07-20","verified_at":"2026-12-07","scenarios":{"a single sub-agent":"pass","a tool call":"pass"}},
  ],
  "opencode": [
    {"version":"1.1.11","released_at":"2026-05-18","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.1.27","released_at":"2026-05-14","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.1.53","released_at":"2026-04-13","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.1.65","released_at":"2026-09-23","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.2.6","released_at":"2026-05-08","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.3.0","released_at":"2026-09-16","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.3.2","released_at":"2026-03-26","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.14.34","released_at":"2026-08-24","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"fail","a tool call":"pass"}},
    {"version":"1.17.0","released_at":"2026-08-15","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"pass","a tool call":"pass"}},
    {"version":"1.18.33","released_at":"2026-09-28","verified_at":"2026-12-03","scenarios":{"a single sub-agent":"pass","a tool call":"pass"}},
  ],
  "pi": [
    {"version":"0.27.9","released_at":"2026-04-02","verified_at":"2026-12-03","scenarios":{"a tool call":"pass"}},
    {"version":"0.32.3","released_at":"2026-03-07","verified_at":"2026-12-03","scenarios":{"a tool call":"pass"}},
    {"version":"0.37.2","released_at":"2026-05-15","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"fail","a tool call":"pass"}},
    {"version":"0.45.7","released_at":"2026-03-31","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"fail","a tool call":"pass"}},
    {"version":"0.52.5","released_at":"2026-05-07","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"fail","a tool call":"pass"}},
    {"version":"0.60.0","released_at":"2026-05-08","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"fail","a tool call":"pass"}},
    {"version":"0.63.2","released_at":"2026-05-07","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"pass","a tool call":"pass"}},
    {"version":"0.67.1","released_at":"2026-08-23","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"pass","a tool call":"pass"}},
    {"version":"0.70.6","released_at":"2026-07-11","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"pass","a tool call":"pass"}},
    {"version":"0.73.1","released_at":"2026-07-17","verified_at":"2026-12-03","scenarios":{"a single sub-agent (example extension)":"pass","a tool call":"pass"}},
  ],
};
