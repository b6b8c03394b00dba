import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSecretKey, isSecretQueryName, redactConfig, redactPath, redactUrl } from '../../../src/core/redaction.js';
import { SecretMasker } from '../../../src/core/secret-masker.js';

describe('one redaction module', () => {
  // Every name issue 47 found kept in the clear by one redactor or another, and names that must stay.
  const secretQuery = ['key', 'api_key', 'apiKey', 'API-KEY', 'x-api-key', 'accessToken', 'access_token', 'apiToken', 'authToken', 'secretKey', 'privateKey',
    'sessionToken', 'clientSecret', 'client_secret', 'accessKey', 'pass', 'password', 'hmac', 'key[]', 'keys', 'sig', 'X-Amz-Signature', 'code', 'session', 'jwt', 'token', 'auth'];
  const plainQuery = ['api-version', 'beta', 'model', 'monkey', 'keyboard', 'tokenizer', 'passage', 'limit', 'stream'];
  it.each(secretQuery)('query name %s is a credential', (name) => {
    expect(isSecretQueryName(name)).toBe(true);
    expect(redactPath(`/v1/x?${encodeURIComponent(name)}=S3CRETvalue&beta=true`)).toBe(`/v1/x?${encodeURIComponent(name)}=REDACTED&beta=true`);
  });
  it.each(plainQuery)('query name %s is kept', (name) => {
    expect(isSecretQueryName(name)).toBe(false);
    expect(redactPath(`/v1/x?${name}=v`)).toBe(`/v1/x?${name}=v`);
  });
  it('config keys: credentials redacted, the names of variables, ids and token counts kept', () => {
    for (const k of ['api_key', 'apiKey', 'secretKey', 'password', 'pass', 'hmac', 'authorization', 'clientSecret', 'sig']) expect(isSecretKey(k)).toBe(true);
    for (const k of ['api_key_env', 'apiKeyEnv', 'sessionKey', 'session_id', 'cache_key', 'max_tokens', 'maxOutputTokens', 'model', 'code_style']) expect(isSecretKey(k)).toBe(false);
  });
  it('URLs: no userinfo, no fragment, credential query values replaced (lock.json and printed upstreams alike)', () => {
    expect(redactUrl('https://u:pw@api.example.com/v1?api-version=1&sig=abc&code=xyz&pass=p#frag')).toBe('https://api.example.com/v1?api-version=1&sig=REDACTED&code=REDACTED&pass=REDACTED');
    expect(redactConfig({ api_base: 'https://u:pw@h.example/v1?accessToken=t#f', api_key_env: 'MY_KEY', headers: { 'x-api-key': 'k' } })).toEqual({
      api_base: 'https://h.example/v1?accessToken=REDACTED',
      api_key_env: 'MY_KEY',
      headers: { 'x-api-key': '<redacted>' },
    });
  });
});

describe('SecretMasker', () => {
  const secret = 'CANARY-not-a-key-0123456789abcdef';
  const masker = new SecretMasker([secret, 'short']);
  it('masks with the same length, ignores values too short to be credentials', () => {
    const masked = masker.maskText(`a ${secret} b short`);
    expect(masked).toBe(`a REDACTED${'*'.repeat(secret.length - 8)} b short`);
  });
  it('a stream masks a secret split across any chunking, and holds back only a possible secret prefix', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 6 }), (before, after, cuts) => {
        const text = Buffer.from(`${before}${secret}${after}${secret}`);
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const stream = masker.stream();
        const out: Buffer[] = [];
        let at = 0;
        for (const p of [...points, text.length]) {
          out.push(stream.push(text.subarray(at, p)));
          at = p;
        }
        out.push(stream.end());
        const joined = Buffer.concat(out);
        expect(joined.length).toBe(text.length);
        expect(joined.toString()).not.toContain(secret);
        expect(joined.toString()).toBe(masker.maskText(text.toString()));
      }),
    );
    const stream = masker.stream();
    expect(stream.push(Buffer.from('data: {}\n\n')).toString()).toBe('data: {}\n\n'); // an SSE event is not delayed
  });
});
