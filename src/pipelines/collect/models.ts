import { readFile } from 'node:fs/promises';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { DEFAULT_SCRIPT } from '../../sources/scripted-model/default-script.js';
import type { Script } from '../../sources/scripted-model/script.js';

/** A model a sample runs against: the embedded scripted model, or an API named in --model-config. */
export type ResolvedModel =
  | { id: string; kind: 'scripted'; script: Script; apiKey: string; context?: ContextSettings }
  | { id: string; kind: 'api'; apiBase: string; apiKey: string; modelName: string; config: Record<string, unknown>; context?: ContextSettings };

/**
 * How much context the harness may use before it compacts (a model config's `context_window` and
 * `auto_compact_percent`): a small window drives a harness through its real compaction on the scripted model.
 */
export interface ContextSettings {
  /** Tokens the harness treats as the model's window. */
  window?: number;
  /** Compact when the context reaches this percentage of the window. */
  autoCompactPercent?: number;
}

function contextSettings(id: string, entry: Record<string, unknown> | undefined): ContextSettings | undefined {
  if (!entry) return undefined;
  const out: ContextSettings = {};
  const window = entry.context_window;
  const percent = entry.auto_compact_percent;
  if (window !== undefined) {
    if (typeof window !== 'number' || !Number.isInteger(window) || window <= 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: '${id}'.context_window must be a positive integer (tokens)`);
    out.window = window;
  }
  if (percent !== undefined) {
    if (typeof percent !== 'number' || !(percent > 0 && percent <= 100)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: '${id}'.auto_compact_percent must be a number in (0, 100]`);
    out.autoCompactPercent = percent;
  }
  return out.window === undefined && out.autoCompactPercent === undefined ? undefined : out;
}

export interface ModelConfigFile {
  /** An API model needs api_base; a scripted/<name> entry may only set context settings. */
  models: Record<string, { api_base?: string; api_key_env?: string; model?: string; context_window?: number; auto_compact_percent?: number } & Record<string, unknown>>;
}

const SCRIPTS: Record<string, Script> = { default: DEFAULT_SCRIPT };

export async function loadModelConfig(path: string | undefined): Promise<ModelConfigFile> {
  if (!path) return { models: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config ${path}: ${(err as Error).message}`);
  }
  const models = (parsed as { models?: unknown }).models;
  if (!models || typeof models !== 'object') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config ${path}: expected {"models": {"provider/model": {"api_base": ..., "api_key_env": ...}}}`);
  return parsed as ModelConfigFile;
}

/**
 * `scripted/<name>` starts the embedded scripted model (no network, no credentials); any other
 * `provider/model` must be in the model config with an API base, its key read only from the environment
 * variable the config names — never from the config file, never written anywhere.
 */
export function resolveModel(id: string, config: ModelConfigFile, env: NodeJS.ProcessEnv = process.env): ResolvedModel {
  const [provider, ...rest] = id.split('/');
  if (!provider || rest.length === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}': expected provider/model, e.g. scripted/default`);
  if (provider === 'scripted') {
    const script = SCRIPTS[rest.join('/')];
    if (!script) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}': no embedded script '${rest.join('/')}' (there is: ${Object.keys(SCRIPTS).map((s) => `scripted/${s}`).join(', ')})`);
    const context = contextSettings(id, config.models[id]);
    return { id, kind: 'scripted', script, apiKey: 'roller-scripted-model-dummy-key', ...(context ? { context } : {}) };
  }
  const entry = config.models[id];
  if (!entry) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}' is not in --model-config (models there: ${Object.keys(config.models).join(', ') || 'none'})`);
  if (typeof entry.api_base !== 'string') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: '${id}' has no api_base`);
  const keyEnv = entry.api_key_env;
  const apiKey = keyEnv ? env[keyEnv] : undefined;
  if (keyEnv && !apiKey) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}': the environment variable ${keyEnv} named by --model-config is not set`);
  const context = contextSettings(id, entry);
  return { id, kind: 'api', apiBase: entry.api_base, apiKey: apiKey ?? '', modelName: entry.model ?? rest.join('/'), config: entry, ...(context ? { context } : {}) };
}
