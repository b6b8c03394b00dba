import { ErrorCode, RollerError } from '../../core/errors.js';
import type { HarnessRunner } from '../../harnesses/adapter.js';
import { checkProfile } from '../../harnesses/profiles.js';
import { releasedSince } from '../../harnesses/release.js';
import { VERIFIED_VERSIONS } from '../../harnesses/verified-versions.js';
import type { Task } from '../../schemas/task.js';
import { detectIsolation } from '../../sources/isolation.js';
import { wantsTokenIds, type ModelConfigFile, type ResolvedModel } from './models.js';
import type { CollectOptions } from './run.js';

/**
 * What collect refuses before anything is written: options the harness cannot honour. Returns whether OpenClaw's
 * cache trace is on (seeds/003: by default for the one harness that has one).
 */
export function refuseRunOptions(o: CollectOptions, runner: HarnessRunner): boolean {
  if (o.thinking && !runner.thinkingLevels.includes(o.thinking)) {
    const levels = runner.thinkingLevels;
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--thinking ${o.thinking}: ${levels.length > 0 ? `${o.harness} takes ${levels.join(', ')}` : `roller cannot set a reasoning level for ${o.harness} yet`}`);
  }
  if (o.captureCalls && o.wireTrace === 'off') {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, '--capture-calls records calls from the wire: it needs the wire trace on; drop --wire-trace off (actf, the default, or full)');
  }
  const harnessVersion = o.harnessVersion ?? runner.pin.version;
  if (o.harnessVersion !== undefined && o.harnessVersion !== runner.pin.version && !o.allowUnverifiedVersion) {
    const verified = (VERIFIED_VERSIONS[o.harness] ?? []).find((v) => v.version === o.harnessVersion);
    if (!verified) {
      const known = (VERIFIED_VERSIONS[o.harness] ?? []).map((v) => v.version);
      throw new RollerError(
        ErrorCode.INVALID_OPTIONS,
        `--harness-version ${o.harnessVersion}: roller has not verified ${o.harness} ${o.harnessVersion} (${known.length > 0 ? `verified: ${known.join(', ')}; pinned ${runner.pin.version}` : `pinned ${runner.pin.version}; no other version verified`}); run \`roller verify --harness ${o.harness} --versions ${o.harnessVersion}\` first, or pass --allow-unverified-version to collect anyway`,
      );
    }
  }
  if (o.thinking && runner.thinkingSince && !releasedSince(harnessVersion, runner.thinkingSince)) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--thinking ${o.thinking}: ${o.harness} ${harnessVersion} takes no reasoning level (from ${runner.thinkingSince} on); drop --thinking or choose a later --harness-version`);
  }
  checkProfile(o.harness, runner, o.harnessProfile);
  const refused = runner.refusesOptions?.({ thinking: o.thinking ?? null, keepThinking: o.keepThinking ?? true });
  if (refused) throw new RollerError(ErrorCode.INVALID_OPTIONS, refused);
  // seeds/003: OpenClaw's cache trace is on by default; no other harness has one.
  const cacheTrace = o.cacheTrace ?? runner.cacheTraceFile !== undefined;
  if (cacheTrace && !runner.cacheTraceFile) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--cache-trace records OpenClaw's cache trace; ${o.harness} has none`);
  for (const p of o.collectPaths ?? []) {
    if (p.startsWith('/') || p.split(/[\\/]/).includes('..')) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--collect-path '${p}' must stay inside the work directory`);
  }
  return cacheTrace;
}

/** Tasks and models the harness cannot run as asked, and a model key the harness would hold (--wire-trace off). */
export function refuseModels(o: CollectOptions, runner: HarnessRunner, models: readonly ResolvedModel[], tasks: readonly Task[]): void {
  const withFollowups = tasks.find((t) => (t.followups?.length ?? 0) > 0);
  if (withFollowups && !runner.sessionOfStdout) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `${o.tasks}: task '${withFollowups.id}' has followups; continuing a session is implemented for claude-code (--resume), codex (exec resume of the root thread), opencode and pi (--session) only in this version, not ${o.harness}`);
  }
  const compacting = models.find((m) => m.context);
  if (compacting && !runner.contextSettings) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: context_window / auto_compact_percent of '${compacting.id}' are applied to claude-code only in this version, not ${o.harness}`);
  }
  const tokenIds = models.find(wantsTokenIds);
  if (tokenIds && !o.captureCalls) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: '${tokenIds.id}' asks for token ids (token_ids), which are recorded per call in calls.jsonl: pass --capture-calls`);
  }
  if (o.wireTrace === 'off') {
    // No proxy stands between the CLI and the model API: the CLI is given the base as it is, and a CLI appends its
    // own path to it, so a query or userinfo (which the proxy would carry) cannot be kept.
    for (const m of models) {
      if (m.kind !== 'api') continue;
      const url = new URL(m.apiBase);
      if (m.protocol !== 'anthropic-messages' && !/\/v1\/?$/.test(url.pathname)) {
        throw new RollerError(ErrorCode.INVALID_OPTIONS, `--wire-trace off: model ${m.id}'s api_base ${url.origin}${url.pathname} does not end in /v1, which ${o.harness}'s SDK puts before ${m.protocol === 'openai-responses' ? '/responses' : '/chat/completions'} itself; only roller's recording proxy maps another prefix. Use --wire-trace actf (the default)`);
      }
      if (url.search || url.username || url.password) {
        throw new RollerError(ErrorCode.INVALID_OPTIONS, `--wire-trace off: model ${m.id}'s api_base has ${url.search ? 'a query' : 'userinfo'}, which only roller's recording proxy carries to the model API; use --wire-trace actf (the default)`);
      }
      if (m.apiKey && !o.keyInHarness) {
        throw new RollerError(ErrorCode.INVALID_OPTIONS, `--wire-trace off: model ${m.id} has a key (api_key_env), and without roller's proxy the harness would hold it — and so would every tool the agent runs. roller keeps keys in its proxy: use --wire-trace actf (the default), or pass --key-in-harness to accept that the agent holds the key`);
      }
      if (m.apiKey) o.onNotice?.(`--key-in-harness: model ${m.id}'s key is given to the harness itself (--wire-trace off runs no proxy); every tool the agent runs can read it`);
    }
  }
}

/**
 * A model key with the local runner where the machine gives the agent no namespace of its own: every tool the agent runs
 * could read roller's environment (/proc/PID/environ), where the key is. Refused unless the user accepts exactly that.
 */
export function refuseUnisolatedKeys(o: CollectOptions, models: readonly ResolvedModel[]): void {
  if (o.runner === 'docker') return;
  const keyed = models.find((m) => m.kind === 'api' && m.apiKey !== '');
  if (!keyed) return;
  const isolation = detectIsolation();
  if (isolation.pidNamespace) return;
  if (!o.agentMayReadKey) {
    throw new RollerError(
      ErrorCode.INVALID_OPTIONS,
      `model ${keyed.id} has a key (api_key_env), and this machine gives the agent no process isolation (${isolation.reason}): every tool the agent runs could read roller's environment, key included. Use --runner docker (the container is the boundary), allow user namespaces, or pass --agent-may-read-key to accept that risk`,
    );
  }
  o.onNotice?.(`--agent-may-read-key: model ${keyed.id}'s key is in roller's environment, which the agent's tools can read here (${isolation.reason})`);
}

/**
 * --model-config without --model: the run would be the embedded scripted model's, and the API models the config names
 * (that no user simulator uses) would be silently left out. Refused, naming them.
 */
export function refuseUnusedModelConfig(o: CollectOptions, config: ModelConfigFile, simulators: ReadonlyMap<string, ResolvedModel>): void {
  const unused = Object.entries(config.models)
    .filter(([id, entry]) => entry.api_base !== undefined && !simulators.has(id) && !o.models.includes(id))
    .map(([id]) => id);
  if (unused.length === 0) return;
  throw new RollerError(
    ErrorCode.INVALID_OPTIONS,
    `--model-config ${o.modelConfig} names ${unused.join(', ')}, but no --model was given, so the run would use only ${o.models.join(', ')} (the embedded scripted model); pass --model ${unused[0]} (repeat --model for more)`,
  );
}
