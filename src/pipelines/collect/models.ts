import { readFile } from 'node:fs/promises';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { DEFAULT_SCRIPT } from '../../sources/scripted-model/script.js';
import type { Script } from '../../sources/scripted-model/script.js';

/** A model a sample runs against: the embedded scripted model, or an API named in --model-config. */
export type ResolvedModel =
  | { id: string; kind: 'scripted'; script: Script; apiKey: string }
  | { id: string; kind: 'api'; apiBase: string; apiKey: string; modelName: string; config: Record<string, unknown> };

export interface ModelConfigFile {
  models: Record<string, { api_base: string; api_key_env?: string; model?: string } & Record<string, unknown>>;
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
    return { id, kind: 'scripted', script, apiKey: 'roller-scripted-model-dummy-key' };
  }
  const entry = config.models[id];
  if (!entry) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}' is not in --model-config (models there: ${Object.keys(config.models).join(', ') || 'none'})`);
  if (typeof entry.api_base !== 'string') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: '${id}' has no api_base`);
  const keyEnv = entry.api_key_env;
  const apiKey = keyEnv ? env[keyEnv] : undefined;
  if (keyEnv && !apiKey) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}': the environment variable ${keyEnv} named by --model-config is not set`);
  return { id, kind: 'api', apiBase: entry.api_base, apiKey: apiKey ?? '', modelName: entry.model ?? rest.join('/'), config: entry };
}
