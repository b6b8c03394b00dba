/**
 * API models (issue 60): the model config's entries as checked, the protocol a harness calls each in, the upstream the
 * proxy forwards to, the failure a harness gave up on, and the scripted model served as a provider.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { harnessAdapter } from '../../src/harnesses/index.js';
import { apiUpstream, loadModelConfig, lockedModel, protocolFor, resolveModel } from '../../src/pipelines/collect/models.js';
import { lastCallFailure } from '../../src/pipelines/collect/preflight.js';
import type { Call } from '../../src/schemas/call.js';
import { parseUpstream, upstreamPath } from '../../src/sources/proxy/request-target.js';
import { startScriptedModel, type ScriptedModelServer } from '../../src/sources/scripted-model/server.js';
import { requestSetup } from '../../src/transforms/protocols/request-setup.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';
import { writeFile } from 'node:fs/promises';

const tmp = useTempDir('model-config');
const examples = join(repoRoot, 'examples', 'models');

async function configOf(models: unknown): Promise<string> {
  const path = join(tmp.path, `m-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, JSON.stringify({ models }));
  return path;
}

describe('--model-config entries', () => {
  it.each(readdirSync(examples).filter((f) => f.endsWith('.json') && f !== 'scripted-provider.json'))('examples/models/%s: every model resolves for its harness, in a protocol it speaks', async (file) => {
    const harness = file.replace(/\.json$/, '');
    const config = await loadModelConfig(join(examples, file));
    const runner = harnessAdapter(harness).runner!;
    for (const id of Object.keys(config.models)) {
      const env = { [config.models[id]!.api_key_env ?? 'UNUSED']: 'sk-test-key' };
      const m = resolveModel(id, config, env);
      expect(m.kind).toBe('api');
      expect(runner.protocols).toContain(protocolFor(m, harness, runner.protocols));
    }
  });

  it('refuses what is not a model entry: an unknown key, a credential header, a key-shaped header value, an unknown protocol', async () => {
    await expect(loadModelConfig(await configOf({ 'a/b': { api_base: 'https://x.test/v1', api_kye_env: 'K' } }))).rejects.toThrow(/\$\.models\["a\/b"\]: .*api_kye_env|api_kye_env/);
    await expect(loadModelConfig(await configOf({ 'a/b': { api_base: 'https://x.test/v1', headers: { Authorization: 'Bearer x' } } }))).rejects.toThrow(/a credential header: keys come only from api_key_env/);
    await expect(loadModelConfig(await configOf({ 'a/b': { api_base: 'https://x.test/v1', headers: { 'X-Title': 'sk-proj-abcdefghijklmnop1234' } } }))).rejects.toThrow(/looks like a credential/);
    await expect(loadModelConfig(await configOf({ 'a/b': { api_base: 'https://x.test/v1', protocol: 'gemini' } }))).rejects.toThrow(/protocol/);
    await expect(loadModelConfig(await configOf({ 'a/b': { api_base: 'ftp://x.test' } }))).rejects.toThrow(/an http\(s\) URL/);
  });

  it('the protocol: the harness own by default, another it speaks when asked, one it cannot speak refused', async () => {
    const config = await loadModelConfig(await configOf({ 'p/chat': { api_base: 'https://x.test/v1' }, 'p/msgs': { api_base: 'https://x.test', protocol: 'anthropic-messages' } }));
    const chat = resolveModel('p/chat', config, {});
    const msgs = resolveModel('p/msgs', config, {});
    expect(protocolFor(chat, 'pi', harnessAdapter('pi').runner!.protocols)).toBe('openai-chat-completions');
    expect(protocolFor(chat, 'codex', harnessAdapter('codex').runner!.protocols)).toBe('openai-responses');
    expect(protocolFor(msgs, 'opencode', harnessAdapter('opencode').runner!.protocols)).toBe('anthropic-messages');
    expect(() => protocolFor(msgs, 'codex', harnessAdapter('codex').runner!.protocols)).toThrow('--model p/msgs: its protocol anthropic-messages (--model-config) is not one codex speaks (openai-responses); nothing was run');
    expect(() => protocolFor(msgs, 'deepseek', harnessAdapter('deepseek').runner!.protocols)).toThrow(/not one deepseek speaks \(openai-chat-completions\)/);
    // The lock: the base, the upstream model id and the protocol as resolved — never the key.
    expect(lockedModel({ ...resolveModel('p/chat', config, {}), protocol: 'openai-responses' })).toEqual({ api_base: 'https://x.test/v1', model: 'chat', protocol: 'openai-responses' });
    // The scripted model's lock as earlier rollers wrote it (a resume of their runs still matches), its protocol only when named.
    expect(lockedModel({ ...resolveModel('scripted/default', config, {}), protocol: 'openai-responses' })).toEqual({ kind: 'scripted' });
    expect(lockedModel(resolveModel('scripted/default', { models: { 'scripted/default': { protocol: 'anthropic-messages' } } }, {}))).toEqual({ kind: 'scripted', protocol: 'anthropic-messages' });
  });

  it('a scripted model takes no api_base or key', async () => {
    const config = await loadModelConfig(await configOf({ 'scripted/default': { api_base: 'https://x.test' } }));
    expect(() => resolveModel('scripted/default', config, {})).toThrow(/embedded scripted model, which takes no api_base or key/);
  });
});

describe('the upstream of an API model', () => {
  it("an OpenAI-protocol api_base is the SDK base: the harness's /v1 is the base's own; an Anthropic base takes paths as sent", () => {
    const m = (api_base: string, protocol?: string) => ({ ...resolveModel('p/m', { models: { 'p/m': { api_base, ...(protocol ? { protocol: protocol as 'anthropic-messages' } : {}) } } }, {}), ...(protocol ? {} : { protocol: 'openai-chat-completions' as const }) }) as Extract<ReturnType<typeof resolveModel>, { kind: 'api' }>;
    const target = (u: ReturnType<typeof apiUpstream>) => parseUpstream(u.url, { ...(u.clientBasePath ? { clientBasePath: u.clientBasePath } : {}) });
    expect(upstreamPath(target(apiUpstream(m('https://openrouter.ai/api/v1'))), '/v1/chat/completions')).toBe('/api/v1/chat/completions');
    expect(upstreamPath(target(apiUpstream(m('https://gen.test/v1beta/openai'))), '/v1/chat/completions')).toBe('/v1beta/openai/chat/completions');
    expect(upstreamPath(target(apiUpstream(m('https://api.deepseek.com'))), '/chat/completions')).toBe('/chat/completions'); // dsh puts no /v1
    expect(upstreamPath(target(apiUpstream(m('https://api.anthropic.com', 'anthropic-messages'))), '/v1/messages?beta=true')).toBe('/v1/messages?beta=true');
    expect(upstreamPath(parseUpstream('http://h/v1?api-version=1', { clientBasePath: '/v1' }), '/v1/responses')).toBe('/v1/responses?api-version=1');
    expect(upstreamPath(parseUpstream('http://h/v1', { clientBasePath: '/v1' }), '/v1x/other')).toBe('/v1/v1x/other'); // only a whole segment
    expect(() => parseUpstream('http://h', { clientBasePath: '/../x' })).toThrow(/must be \/segment/);
    expect(parseUpstream('http://h', { headers: { 'X-Title': 't' } }).headers).toEqual([['x-title', 't']]);
  });
});

describe('the system prompt and tools of a request, whatever its protocol', () => {
  const fn = { type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object' } } };
  it('Chat Completions, Anthropic Messages and Responses give the same ACTF tools', () => {
    expect(requestSetup('openai-chat-completions', { messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'u' }], tools: [fn] })).toEqual({ system: ['S'], tools: [fn] });
    expect(requestSetup('anthropic-messages', { system: [{ type: 'text', text: 'S' }], messages: [], tools: [{ name: 'read', description: 'Read a file', input_schema: { type: 'object' } }] })).toEqual({ system: ['S'], tools: [fn] });
    expect(requestSetup('openai-responses', { instructions: 'S', input: [{ role: 'developer', content: [{ type: 'input_text', text: 'D' }] }], tools: [{ type: 'function', name: 'read', description: 'Read a file', parameters: { type: 'object' } }, { type: 'web_search' }] })).toEqual({ system: ['S', 'D'], tools: [fn, { type: 'web_search' }] });
    expect(requestSetup('openai-responses', { input: [] })).toEqual({ system: [], tools: null });
  });
});

describe('the failure a harness gave up on', () => {
  const call = (seq: number, status: number | null, execution: Call['execution_status'], why?: string): Call =>
    ({ seq, protocol: 'openai-chat-completions', method: 'POST', path: '/v1/chat/completions', http_status: status, execution_status: execution, status_reasons: why ? { execution_status: why } : {}, errors: [] }) as unknown as Call;
  it('the last model call failed: named with its status and the retries before it; a failure retried past is none', () => {
    expect(lastCallFailure([call(0, 429, 'failed', 'HTTP 429 (rate_limit_error: slow down)'), call(1, 429, 'failed', 'HTTP 429 (rate_limit_error: slow down)')])).toBe(
      "the model API failed call 1 (POST /v1/chat/completions, HTTP 429): HTTP 429 (rate_limit_error: slow down); 1 earlier call of this attempt failed too (the harness's retries, each in calls.jsonl)",
    );
    expect(lastCallFailure([call(0, 500, 'failed', 'HTTP 500'), call(1, 200, 'completed')])).toBeUndefined();
    expect(lastCallFailure([call(0, 200, 'completed'), call(1, null, 'interrupted')])).toBeUndefined(); // a call the harness itself abandoned
    expect(lastCallFailure([])).toBeUndefined();
  });
});

describe('roller scripted-model served as a provider', () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => server?.close());
  const post = (path: string, headers: Record<string, string>, body: unknown) => request(`${server!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it("asks for its key (x-api-key or Bearer), serves only its models, and fails a scenario's requests in the protocol's error shape", async () => {
    server = await startScriptedModel({ requireKey: 'sk-served', models: ['m1'] });
    const chat = { model: 'm1', messages: [{ role: 'user', content: '[HELLO] hi' }] };
    const noKey = await post('/v1/chat/completions', {}, chat);
    expect(noKey.statusCode).toBe(401);
    expect(await noKey.body.json()).toEqual({ error: { message: 'scripted model: no API key was sent', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    const ok = await post('/v1/chat/completions', { authorization: 'Bearer sk-served' }, chat);
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
    const unknown = await post('/v1/messages', { 'x-api-key': 'sk-served' }, { ...chat, model: 'm2', max_tokens: 10 });
    expect(unknown.statusCode).toBe(404);
    expect(await unknown.body.json()).toEqual({ type: 'error', error: { type: 'not_found_error', message: "scripted model: the model 'm2' does not exist (served: m1)" } });
    const limited = await post('/v1/messages', { 'x-api-key': 'sk-served' }, { model: 'm1', max_tokens: 10, messages: [{ role: 'user', content: '[UPSTREAM-429] hi' }] });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(await limited.body.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(server.answered).toBe(2); // refused requests are not answers
  });
});
