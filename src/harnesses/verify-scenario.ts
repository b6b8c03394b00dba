/**
 * seeds/000's common acceptance as `roller verify` runs it: a scenario is a scripted prompt and what its run must
 * show. Each harness's folder lists its own (verify-scenarios.ts), handed over by its runner (HarnessRunner.verify).
 * A scenario a harness cannot express says why (not_applicable only where the seed says so).
 */
export type ScenarioStatus = 'pass' | 'fail' | 'not_applicable' | 'not_run';

export interface ScenarioResult {
  scenario: string;
  status: ScenarioStatus;
  reason: string;
  seconds: number;
}

export interface Scenario {
  name: string;
  /** The script tag that drives it; absent: not runnable here, with the reason. */
  prompt?: string;
  agents?: number;
  background?: boolean;
  /** The deepest sub-agent's depth, where the scenario is about nesting. */
  depth?: number;
  /** Files created in the work directory first (e.g. a project's custom agent definitions). */
  files?: Record<string, string>;
  /**
   * Children whose spawning call the native files cannot name (dsh: several foreground sub-agents of one parent):
   * their spawn relation must be unknown with its reason, never a guess; the others are checked as usual.
   */
  unboundSpawns?: number;
  /** The sub-agents' requests must carry tool lists of their own: different from each other's. */
  distinctTools?: boolean;
  extraArgs?: string[];
  /** Options of this harness's launch plan only (RunLaunch.harnessOptions: Codex agent roles, OpenClaw agents...). */
  harnessOptions?: Record<string, unknown>;
  /** A harness profile the runner applies (Pi's sub-agent example extension). */
  profile?: string;
  skip?: { status: 'not_applicable' | 'not_run'; reason: string };
}

/** What `roller verify` runs of a harness, and the scenarios its version matrix records as fixtures. */
export interface HarnessVerify {
  scenarios: readonly Scenario[];
  /** docs/VERSIONS.md: the scenarios each released version is run with, kept as fixtures (names among `scenarios`). */
  matrix: readonly string[];
}
