import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { isSecretKey, looksLikeCredential, SECRET_HEADERS } from '../../core/redaction.js';
import { API_PROTOCOLS, type ApiProtocol } from '../../schemas/api-protocol.js';
import { DEFAULT_SCRIPT } from '../../sources/scripted-model/default-script.js';
import type { Script } from '../../sources/scripted-model/script.js';

/**
 * The key roller's proxy sends the embedded scripted model (it asks for none): random-looking past its prefix, as a key
 * is — the masker masks any 12 characters of it, and words (`scripted-model`) would mask a model's name too.
 */
export const SCRIPTED_DUMMY_KEY = 'roller-dummy-key-7f3a9c2e5b1d4f60a8c3';

/** A model a sample runs against: the embedded scripted model, or an API named in --model-config. */
export type ResolvedModel =
  | { id: string; kind: 'scripted'; script: Script; apiKey: string; protocol?: ApiProtocol; configuredProtocol?: ApiProtocol; context?: ContextSettings; tokenIds?: boolean }
  | {
      id: string;
      kind: 'api';
      apiBase: string;
      apiKey: string;
      modelName: string;
      /** As the config asks (absent: the harness's own protocol). */
      protocol?: ApiProtocol;
      /** Non-secret headers the proxy adds to every request to this API. */
      headers: Record<string, string>;
      config: Record<string, unknown>;
      context?: ContextSettings;
    };

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

/** Headers the proxy itself sets or that would carry a credential: never from a model config. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'content-encoding', 'transfer-encoding', 'connection', 'upgrade', 'accept-encoding', 'te', 'trailer', 'keep-alive']);

/** Why a header of a model config cannot be sent, or null. */
function headerProblem(name: string, value: string): string | null {
  const lower = name.toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return 'not an HTTP header name';
  if (SECRET_HEADERS.has(lower) || isSecretKey(name)) return 'a credential header: keys come only from api_key_env, which roller keeps in its proxy';
  if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-roller-')) return 'set by the proxy itself';
  if (/[\r\n]/.test(value)) return 'holds a line break';
  if (looksLikeCredential(value)) return 'its value looks like a credential (keys come only from api_key_env)';
  return null;
}

const Headers = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  for (const [name, value] of Object.entries(headers)) {
    const problem = headerProblem(name, value);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
  }
});

/** One entry of --model-config's `models` (seeds/003 §7, DESIGN §10). */
export const ModelEntry = z
  .strictObject({
    api_base: z
      .string()
      .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'an http(s) URL')
      .optional()
      .describe("the API's base URL as its SDK takes it: Anthropic Messages https://api.anthropic.com; OpenAI protocols up to /v1 (https://api.openai.com/v1, http://127.0.0.1:8000/v1)"),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional().describe('the variable holding the key (never the key itself)'),
    model: z.string().min(1).optional().describe('the model id the API takes (default: the part after provider/)'),
    protocol: z.enum(API_PROTOCOLS).optional().describe("the API's wire protocol (default: the harness's own)"),
    headers: Headers.optional()
      .describe('non-secret headers added to every request (OpenRouter HTTP-Referer, an API version)'),
    context_window: z.number().int().positive().optional().describe('tokens the harness treats as the window'),
    auto_compact_percent: z.number().gt(0).lte(100).optional().describe('compact at this percentage of the window'),
    token_ids: z
      .boolean()
      .optional()
      .describe("an open-model server's token ids and log-probabilities (vLLM): return_token_ids and logprobs added to every Chat Completions request; recorded per call"),
  })
  .describe('an API model (api_base) or the context settings of a scripted/<name> model');
export type ModelEntry = z.infer<typeof ModelEntry>;

export interface ModelConfigFile {
  models: Record<string, ModelEntry>;
  /** The file it was read from (for messages). */
  path?: string;
}

const ModelConfig = z.strictObject({ models: z.record(z.string(), ModelEntry) });

const SCRIPTS: Record<string, Script> = { default: DEFAULT_SCRIPT };

export async function loadModelConfig(path: string | undefined): Promise<ModelConfigFile> {
  if (!path) return { models: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config ${path}: ${(err as Error).message}`);
  }
  const result = ModelConfig.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${formatJsonPath(i.path as (string | number)[])}: ${i.message}`).join('; ');
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config ${path}: ${issues} (expected {"models": {"provider/model": {"api_base", "api_key_env", "model"?, "protocol"?, "headers"?}}}; examples/models/ has one per harness)`);
  }
  return { models: result.data.models, path };
}

function contextSettings(entry: ModelEntry | undefined): ContextSettings | undefined {
  if (!entry || (entry.context_window === undefined && entry.auto_compact_percent === undefined)) return undefined;
  return { ...(entry.context_window !== undefined ? { window: entry.context_window } : {}), ...(entry.auto_compact_percent !== undefined ? { autoCompactPercent: entry.auto_compact_percent } : {}) };
}

/**
 * `scripted/<name>` starts the embedded scripted model (no network, no credentials); any other
 * `provider/model` must be in the model config with an API base, its key read only from the environment
 * variable the config names — never from the config file, never written anywhere.
 */
export function resolveModel(id: string, config: ModelConfigFile, env: NodeJS.ProcessEnv = process.env): ResolvedModel {
  const [provider, ...rest] = id.split('/');
  if (!provider || rest.length === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}': expected provider/model, e.g. scripted/default`);
  const entry = config.models[id];
  const context = contextSettings(entry);
  if (provider === 'scripted') {
    const script = SCRIPTS[rest.join('/')];
    if (!script) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}': no embedded script '${rest.join('/')}' (there is: ${Object.keys(SCRIPTS).map((s) => `scripted/${s}`).join(', ')})`);
    if (entry?.api_base !== undefined || entry?.api_key_env !== undefined) {
      throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: '${id}' is the embedded scripted model, which takes no api_base or key; name a served model something else (e.g. local/scripted with api_base)`);
    }
    return { id, kind: 'scripted', script, apiKey: SCRIPTED_DUMMY_KEY, ...(entry?.protocol ? { protocol: entry.protocol, configuredProtocol: entry.protocol } : {}), ...(context ? { context } : {}), ...(entry?.token_ids ? { tokenIds: true } : {}) };
  }
  if (!entry) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}' is not in --model-config (models there: ${Object.keys(config.models).join(', ') || 'none'})`);
  if (entry.api_base === undefined) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model-config: '${id}' has no api_base`);
  const keyEnv = entry.api_key_env;
  const apiKey = keyEnv ? env[keyEnv] : undefined;
  if (keyEnv && !apiKey) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model '${id}': the environment variable ${keyEnv} named by --model-config is not set`);
  return {
    id,
    kind: 'api',
    apiBase: entry.api_base,
    apiKey: apiKey ?? '',
    modelName: entry.model ?? rest.join('/'),
    ...(entry.protocol ? { protocol: entry.protocol } : {}),
    headers: entry.headers ?? {},
    config: entry,
    ...(context ? { context } : {}),
  };
}

/** The protocol a model is called in by a harness that speaks `spoken` (its own first); one it cannot speak is refused. */
export function protocolFor(model: ResolvedModel, harness: string, spoken: readonly ApiProtocol[]): ApiProtocol {
  const protocol = model.protocol ?? spoken[0]!;
  if (!spoken.includes(protocol)) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model ${model.id}: its protocol ${protocol} (--model-config) is not one ${harness} speaks (${spoken.join(', ')}); nothing was run. Use a base that serves ${spoken.join(' or ')}, or another harness`);
  }
  if (wantsTokenIds(model) && protocol !== 'openai-chat-completions') {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--model ${model.id}: token_ids (--model-config) asks the server for vLLM's return_token_ids and logprobs, which only Chat Completions carries; ${harness} calls it in ${protocol}${spoken.includes('openai-chat-completions') ? ' (set "protocol": "openai-chat-completions" in its entry)' : ', which it cannot change: use a harness that speaks Chat Completions (OpenCode, Pi, OpenClaw, dsh, Hermes)'}`);
  }
  return protocol;
}

/** Whether a model's requests ask the server for its token ids and log-probabilities (`token_ids` in its entry). */
export const wantsTokenIds = (m: ResolvedModel): boolean => (m.kind === 'api' ? m.config.token_ids === true : m.tokenIds === true);

/** What the proxy writes into each Chat Completions body of a model with `token_ids`: vLLM's request fields. */
export const TOKEN_ID_FIELDS = { return_token_ids: true, logprobs: true } as const;

/** Where a model's calls go from the attempt's proxy: the API base (or the run's scripted model) and what the proxy adds. */
export interface ModelUpstream {
  url: string;
  bodyFields?: Readonly<Record<string, unknown>>;
  /** The prefix the harness's SDK puts before an OpenAI endpoint (/v1), which an OpenAI-protocol api_base already ends at. */
  clientBasePath?: string;
  headers?: Readonly<Record<string, string>>;
}

/**
 * An API model's upstream: an OpenAI-protocol api_base is the SDK base (…/v1, or a provider's own prefix), so the /v1
 * the harness's SDK puts before `/chat/completions` or `/responses` is the base's; an Anthropic api_base is the bare
 * base Anthropic's SDK appends `/v1/messages` to, and paths pass as they are.
 */
export function apiUpstream(model: Extract<ResolvedModel, { kind: 'api' }>): ModelUpstream {
  const openai = (model.protocol ?? 'openai-chat-completions') !== 'anthropic-messages';
  return { url: model.apiBase, ...(openai ? { clientBasePath: '/v1' } : {}), ...(Object.keys(model.headers).length > 0 ? { headers: model.headers } : {}), ...(wantsTokenIds(model) ? { bodyFields: TOKEN_ID_FIELDS } : {}) };
}

/**
 * What the lock records of a model: never a key; an API model's base, upstream model id and protocol as resolved; the
 * scripted model's protocol only where its config named one (a run's lock as earlier rollers wrote it stays the same).
 */
export function lockedModel(m: ResolvedModel): Record<string, unknown> {
  if (m.kind === 'scripted') return { kind: 'scripted', ...(m.context ? { context: m.context } : {}), ...(m.configuredProtocol ? { protocol: m.configuredProtocol } : {}), ...(m.tokenIds ? { token_ids: true } : {}) };
  return { ...m.config, model: m.modelName, ...(m.protocol ? { protocol: m.protocol } : {}) };
}
