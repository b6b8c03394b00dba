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

/** `text` through a masking stream, cut at these points (modulo its length): what the stream let out, end included. */
function streamedInPieces(masker: SecretMasker, text: Buffer, cuts: readonly number[]): Buffer {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const stream = masker.stream();
  const out: Buffer[] = [];
  let at = 0;
  for (const p of [...points, text.length]) {
    out.push(stream.push(text.subarray(at, p)));
    at = p;
  }
  out.push(stream.end());
  return Buffer.concat(out);
}

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
        const joined = streamedInPieces(masker, text, cuts);
        expect(joined.length).toBe(text.length);
        expect(joined.toString()).not.toContain(secret);
        expect(joined.toString()).toBe(masker.maskText(text.toString()));
      }),
    );
    const stream = masker.stream();
    expect(stream.push(Buffer.from('data: {}\n\n')).toString()).toBe('data: {}\n\n'); // an SSE event is not delayed
  });
});

describe('SecretMasker: every form an echo can take', () => {
  // A key-shaped fixture, made at run time so that no file holds anything that looks like a real credential.
  const prefix = 'fixture-key-v1-';
  const key = `${prefix}${'Zq8v2LmN4pRt6XyB'}${'1cD3eF5gH7jK9wQ0'}`;
  const masker = new SecretMasker([key]);
  const body = key.slice(prefix.length);
  /** Every 12-character run of the key's private part: none may survive. */
  const pieces = Array.from({ length: body.length - 11 }, (_, i) => body.slice(i, i + 12));
  const holdsPiece = (text: string) => pieces.some((p) => text.includes(p));
  const escapeAll = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

  it('JSON-escaped (every character, or some, any hex case), URL-encoded, both mixed: masked whole, same length', () => {
    for (const echo of [escapeAll(key), escapeAll(key).toUpperCase().replace(/\\U/g, '\\u'), key.replace(/[a-m]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`), encodeURIComponent(key).replace(/[A-Z]/g, (c) => `%${c.charCodeAt(0).toString(16)}`), key.replace(/[0-9]/g, (c) => (Number(c) % 2 ? `%3${c}` : `\\u003${c}`))]) {
      const text = `{"error":"bad key ${echo}","x":1}`;
      const masked = masker.maskText(text);
      expect(masked.length).toBe(text.length);
      expect(masked).toBe(`{"error":"bad key ${'REDACTED'.padEnd(echo.length, '*')}","x":1}`);
    }
  });

  it('JSON.parse of a masked JSON text holds no piece of the key, however the JSON writer escaped it (differential)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.array(fc.boolean(), { minLength: key.length, maxLength: key.length }), fc.string({ maxLength: 30 }), (before, escaped, after) => {
        const spelled = [...key].map((c, i) => (escaped[i] ? escapeAll(c) : c)).join('');
        const json = `{"message":${JSON.stringify(before).slice(0, -1)}${spelled}${JSON.stringify(after).slice(1)}}`;
        expect(JSON.parse(json).message).toBe(before + key + after); // the echo is the key, as a JSON reader reads it
        expect(holdsPiece(JSON.parse(masker.maskText(json)).message)).toBe(false);
      }),
    );
  });

  it('base64 and base64url of the key (or of a text holding it, at any alignment) are masked', () => {
    for (const lead of ['', 'a', 'ab', 'Bearer ', 'user:']) {
      for (const encoded of [Buffer.from(`${lead}${key}`).toString('base64'), Buffer.from(`${lead}${key}!`).toString('base64url')]) {
        const masked = masker.maskText(`auth=${encoded};`);
        const decoded = Buffer.from(masked.slice(5, -1).replace(/[*]/g, 'A').replace(/REDACTED/g, 'AAAAAAAA'), 'base64').toString('latin1');
        expect(holdsPiece(decoded), `${lead} ${encoded} -> ${masked}`).toBe(false);
        expect(masked).toContain('REDACTED');
      }
    }
  });

  it('a piece of 12 characters past the public prefix is masked; shorter pieces and the prefix alone are text', () => {
    expect(masker.maskText(`key ends ${body.slice(5, 17)}.`)).toBe(`key ends REDACTED****.`);
    expect(masker.maskText(`${body.slice(-20)} and ${body.slice(0, 14)}`)).toBe(`${'REDACTED'.padEnd(20, '*')} and ${'REDACTED'.padEnd(14, '*')}`);
    expect(masker.maskText(`${prefix} and ${body.slice(3, 14)}`)).toBe(`${prefix} and ${body.slice(3, 14)}`);
    // The whole key, its prefix with it.
    expect(masker.maskText(`x ${key} y`)).toBe(`x ${'REDACTED'.padEnd(key.length, '*')} y`);
  });

  it('a stream masks escaped and partial echoes split across any chunking, as the whole text is masked', () => {
    fc.assert(
      fc.property(fc.constantFrom(key, escapeAll(key), encodeURIComponent(escapeAll(key)), body.slice(4, 20), Buffer.from(key).toString('base64')), fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 8 }), (echo, cuts) => {
        const text = Buffer.from(`data: {"echo":"${echo}"}\n\n`);
        expect(streamedInPieces(masker, text, cuts).toString()).toBe(masker.maskText(text.toString()));
      }),
    );
  });
});
