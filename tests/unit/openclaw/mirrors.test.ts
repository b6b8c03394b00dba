/** The CLI mirror rules of seeds/003 §5.3, one hand-built OpenClaw transcript per rule. */
import { describe, expect, it } from 'vitest';
import { accountMirrors } from '../../../src/harnesses/openclaw/mirrors.js';

type Json = Record<string, any>;
let n = 0;
const session = (): Json => ({ type: 'session', version: 4, id: 's1' });
const user = (text = 'do it'): Json => ({ type: 'message', id: `u${++n}`, message: { role: 'user', content: text } });
const compaction = (): Json => ({ type: 'compaction', id: `c${++n}` });
const usage = (input: number, output: number, extra: Json = {}) => ({ input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, ...extra });
const reply = (text: string, u: Json | null, o: Json = {}): Json => ({
  type: 'message',
  id: `a${++n}`,
  message: { role: 'assistant', content: [{ type: 'text', text }], provider: 'lab', model: 'm1', stopReason: 'stop', ...(u ? { usage: u } : {}), ...o },
});
const mirror = (text: string, u: Json | null, o: Json = {}) => reply(text, u, { api: 'cli', ...o });

describe('OpenClaw CLI mirror replies', () => {
  it('a mirror of the delivered reply (same usage, same source, same text) adds neither a message nor usage', () => {
    const a = accountMirrors([session(), user(), reply('done', usage(100, 10)), mirror('done', usage(100, 10))]);
    expect(a.requests).toBe(1);
    expect(a.tokens).toMatchObject({ input: 100, output: 10 });
    expect(a.messages.map((m) => [m.kept, m.counted])).toEqual([
      [true, true],
      [false, false],
    ]);
  });

  it('the marker alone decides nothing: a CLI reply whose usage matches no call keeps its content and usage', () => {
    const a = accountMirrors([session(), user(), reply('done', usage(100, 10)), mirror('something new', usage(7, 3))]);
    expect(a.requests).toBe(2);
    expect(a.tokens).toMatchObject({ input: 107, output: 13 });
    expect(a.messages[1]).toMatchObject({ kept: true, counted: true });
  });

  it('a matched mirror with new text fills the gap: the text is kept, the step tokens are not repeated, and it becomes the delivered text', () => {
    const a = accountMirrors([session(), user(), reply('part one', usage(100, 10)), mirror('part one and two', usage(100, 10)), mirror('part one and two', usage(100, 10))]);
    expect(a.tokens).toMatchObject({ input: 100, output: 10 });
    expect(a.messages.map((m) => [m.kept, m.counted])).toEqual([
      [true, true],
      [true, false], // gap fill
      [false, false], // now a repeat of the updated delivered text
    ]);
  });

  it('a cross-source CLI reply keeps content and usage and suspends matching until the next provider reply', () => {
    const a = accountMirrors([session(), user(), reply('done', usage(100, 10)), mirror('done', usage(100, 10), { provider: 'other' }), mirror('done', usage(100, 10))]);
    // The cross-source one counts; the next same-source one cannot match while matching is suspended.
    expect(a.requests).toBe(3);
    const b = accountMirrors([session(), user(), reply('done', usage(100, 10)), mirror('x', usage(1, 1), { provider: 'other' }), reply('again', usage(50, 5)), mirror('again', usage(50, 5))]);
    expect(b.requests).toBe(3); // a provider reply resumes matching
    expect(b.messages.at(-1)).toMatchObject({ kept: false, counted: false });
  });

  it('structured and failed CLI replies are independent', () => {
    const structured = accountMirrors([session(), user(), reply('done', usage(100, 10)), { ...mirror('done', usage(100, 10)), message: { ...mirror('done', usage(100, 10)).message, content: [{ type: 'toolCall', id: 't', name: 'x', arguments: {} }] } }]);
    expect(structured.requests).toBe(2);
    const failed = accountMirrors([session(), user(), reply('done', usage(100, 10)), mirror('done', usage(100, 10), { stopReason: 'error' })]);
    expect(failed.requests).toBe(2);
  });

  it('user, session and compaction events clear the turn: a later identical usage is a new call', () => {
    for (const reset of [user('again'), compaction(), session()]) {
      const a = accountMirrors([session(), user(), reply('done', usage(100, 10)), reset, mirror('done', usage(100, 10))]);
      expect(a.requests).toBe(2);
    }
  });

  it('a CLI fallback after a failed same-source provider call is counted separately', () => {
    const a = accountMirrors([session(), user(), reply('', usage(100, 0), { stopReason: 'error' }), mirror('answer from the CLI', usage(100, 0))]);
    expect(a.requests).toBe(2);
    expect(a.messages[1]!.why).toContain('fallback');
  });

  it('an aggregate matches when all four components equal the turn totals and the total is the cumulative or the last call total', () => {
    const turn = [session(), user(), reply('step', usage(100, 10, { cacheRead: 5 })), reply('done', usage(200, 20, { cacheRead: 7 }))];
    const cumulative = usage(300, 30, { cacheRead: 12, totalTokens: 330 }); // the calls' totals: 110 + 220
    expect(accountMirrors([...turn, mirror('done', cumulative)]).requests).toBe(2);
    // OpenClaw 2026.7.1: cumulative components with the last call's total (context usage).
    expect(accountMirrors([...turn, mirror('done', { ...cumulative, totalTokens: 220 })]).requests).toBe(2);
    // Any other total, or one component off, is not the same calls.
    expect(accountMirrors([...turn, mirror('done', { ...cumulative, totalTokens: 999 })]).requests).toBe(3);
    expect(accountMirrors([...turn, mirror('done', { ...cumulative, cacheRead: 11 })]).requests).toBe(3);
  });

  it('after a provider retry succeeds, the aggregate includes the failed calls usage too', () => {
    const a = accountMirrors([session(), user(), reply('', usage(100, 0), { stopReason: 'error' }), reply('done', usage(120, 15)), mirror('done', usage(220, 15, { totalTokens: 235 }))]);
    expect(a.requests).toBe(2);
    expect(a.tokens).toMatchObject({ input: 220, output: 15 });
  });

  it('cost credits only what no report covered: two $0.05 mirrors of a call whose provider omitted cost total $0.05', () => {
    const a = accountMirrors([session(), user(), reply('done', usage(100, 10)), mirror('done', { ...usage(100, 10), cost: { total: 0.05 } }), mirror('done', { ...usage(100, 10), cost: { total: 0.05 } })]);
    expect(a.cost).toBeCloseTo(0.05, 12);
  });

  it('per-call costs and a later turn total covering them do not add up twice; conflicting reports keep the higher amount', () => {
    const t = [session(), user(), reply('a', { ...usage(100, 10), cost: { total: 0.02 } }), reply('b', { ...usage(50, 5), cost: { total: 0.03 } })];
    expect(accountMirrors([...t, mirror('b', { ...usage(150, 15), totalTokens: 165, cost: { total: 0.05 } })]).cost).toBeCloseTo(0.05, 12);
    expect(accountMirrors([...t, mirror('b', { ...usage(150, 15), totalTokens: 165, cost: { total: 0.04 } })]).cost).toBeCloseTo(0.05, 12); // no refund
    expect(accountMirrors([...t, mirror('b', { ...usage(150, 15), totalTokens: 165, cost: { total: 0.07 } })]).cost).toBeCloseTo(0.07, 12); // the higher known amount
  });

  it('a cost-only mirror is credited to the latest call only when text and source match', () => {
    const costOnly = (text: string, o: Json = {}) => ({ ...mirror(text, null, o), message: { ...mirror(text, null, o).message, cost: 0.01 } });
    expect(accountMirrors([session(), user(), reply('done', usage(100, 10)), costOnly('done')])).toMatchObject({ requests: 1, cost: 0.01 });
    expect(accountMirrors([session(), user(), reply('done', usage(100, 10)), costOnly('other text')]).requests).toBe(2);
  });

  it('native counters win over their aliases, even when broken: reported, counted as 0', () => {
    const a = accountMirrors([session(), user(), reply('done', { input: 'lots', input_tokens: 100, output: 10 })]);
    expect(a.tokens.input).toBe(0);
    expect(a.invalidCounters).toEqual([expect.stringContaining('usage.input = "lots"')]);
    expect(accountMirrors([session(), user(), reply('done', { input_tokens: 100, output_tokens: 10 })]).tokens).toMatchObject({ input: 100, output: 10 });
  });
});
