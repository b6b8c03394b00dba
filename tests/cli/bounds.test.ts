/**
 * Values past what the platform can hold are refused as usage errors that say the bound, never accepted and turned
 * into something else: a timer past Node's longest (it would fire at once), a port past 65535 (it was exit 70).
 */
import { describe, expect, it } from 'vitest';
import { roller } from '../support/roller-cli.js';

describe('bounds of timers and ports', () => {
  it.each([
    [['collect', '--tasks', 'x.jsonl', '--sink-timeout', '2147484'], "--sink-timeout <s>' argument '2147484' is invalid. at most 2147483 seconds"],
    [['collect', '--tasks', 'x.jsonl', '--timeout', '9999999'], "--timeout <s>' argument '9999999' is invalid. at most 2147483 seconds"],
    [['worker', '--queue', 'redis://:p@127.0.0.1:1', '--runs-root', '.', '--lock', '3000000'], "--lock <s>' argument '3000000' is invalid. at most 2147483 seconds"],
    [['view', '.', '--port', '99999'], "--port <n>' argument '99999' is invalid. a port number from 0 to 65535"],
  ])('roller %j is refused, exit 2, saying the bound', async (args, said) => {
    const r = await roller(...args);
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(said)]);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
