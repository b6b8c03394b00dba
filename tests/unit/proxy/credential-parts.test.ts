/**
 * A forwarded `Authorization: Bearer KEY` masks KEY (and its pieces past its public prefix), never the scheme with the
 * prefix: text that merely shares the prefix — a work directory /tmp/roller-verify-… under a key roller-verify-key-… —
 * stays as it is (it once reached the harness masked, which then wrote into a directory named REDACTED*****-…).
 */
import { describe, expect, it } from 'vitest';
import { SecretMasker } from '../../../src/core/secret-masker.js';
import { credentialParts } from '../../../src/sources/proxy/credential.js';

const KEY = `roller-verify-key-${'3b8e1f0c9a7d2e6b5f41'}`;

describe('credential header parts', () => {
  it('Bearer: the token only; Basic: the token and its user:password parts', () => {
    expect(credentialParts(`Bearer ${KEY}`)).toEqual([KEY]);
    expect(credentialParts('Basic dXNlcjpwYXNz')).toEqual(['dXNlcjpwYXNz', 'user:pass', 'user', 'pass']);
    expect(credentialParts(KEY)).toEqual([KEY]);
  });

  it('a path sharing the key public prefix is not masked; the key and its private pieces are', () => {
    const masker = new SecretMasker(credentialParts(`Bearer ${KEY}`));
    expect(masker.maskText('cd /tmp/roller-verify-deepseek-2fRCqM/work')).toBe('cd /tmp/roller-verify-deepseek-2fRCqM/work');
    expect(masker.maskText(`key ${KEY} and Bearer ${KEY}`)).not.toContain('3b8e1f0c9a7d');
    expect(masker.maskText('piece 1f0c9a7d2e6b5f41')).not.toContain('1f0c9a7d2e6b');
  });
});
