/** Pi's launch plan: what roller writes into the attempt's HOME for the CLI (models.json, the recorder extension). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { piAgentDir, piEventsFile, piPlan } from '../../../src/harnesses/pi/launch.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('pi-launch');
const launch = (home: string, recorded?: boolean) => ({ bin: '/nonexistent/pi', prompt: 'hi', home, work: tmp.path, baseUrl: 'http://127.0.0.1:1', apiKey: 'k', ...(recorded === undefined ? {} : { recorded }) });
const provider = (home: string) => (JSON.parse(readFileSync(join(piAgentDir(home), 'models.json'), 'utf8')) as { providers: { roller: Record<string, unknown> } }).providers.roller;

describe('piPlan', () => {
  it("through roller's proxy: the identity header the proxy removes; the recorder installed and told where to write", async () => {
    const home = join(tmp.path, 'recorded');
    const plan = await piPlan(launch(home));
    expect(provider(home).headers).toEqual({ 'x-roller-session-id': expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(existsSync(join(piAgentDir(home), 'extensions', 'roller-recorder.ts'))).toBe(true);
    expect(plan.env?.ROLLER_PI_EVENTS).toBe(piEventsFile(home));
  });

  it('with no proxy (--wire-trace off): no roller header, which would reach the model API itself', async () => {
    const home = join(tmp.path, 'direct');
    await piPlan(launch(home, false));
    expect(provider(home).headers).toBeUndefined();
  });
});
