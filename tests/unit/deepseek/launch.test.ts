/** dsh's launch plan: what it runs, with which environment, and roller's driver put where dsh's loader finds it. */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRollerError } from '../../../src/core/errors.js';
import { deepSeekPlan, DSH_MAX_PROMPT_BYTES } from '../../../src/harnesses/deepseek/launch.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('roller-dsh-launch-');

/** An install prefix laid out as npm leaves it: node_modules/.bin/dsh -> the package's bin script. */
function install(): { prefix: string; bin: string } {
  const prefix = join(tmp.path, `prefix-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(prefix, 'node_modules', '@deepseek-ai', 'dsh', 'lib'), { recursive: true });
  mkdirSync(join(prefix, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(prefix, 'node_modules', '@deepseek-ai', 'dsh', 'lib', 'bin.js'), '#!/usr/bin/env node\n');
  symlinkSync('../@deepseek-ai/dsh/lib/bin.js', join(prefix, 'node_modules', '.bin', 'dsh'));
  return { prefix, bin: join(prefix, 'node_modules', '.bin', 'dsh') };
}

const launch = (bin: string, prompt = '[HELLO] hi') => {
  const home = join(tmp.path, `home-${Math.random().toString(36).slice(2)}`);
  mkdirSync(home, { recursive: true });
  return { bin, prompt, home, work: tmp.path, baseUrl: 'http://127.0.0.1:9999/', apiKey: 'sk-unit-0000', runtime: '/opt/node24/bin/node' };
};

describe('deepSeekPlan', () => {
  it("runs the CLI's own script on its runtime, headless, through roller's driver; nothing inherited but PATH", async () => {
    const { prefix, bin } = install();
    process.env.ROLLER_SHOULD_NOT_LEAK = 'x';
    const l = launch(bin);
    const plan = await deepSeekPlan(l);
    delete process.env.ROLLER_SHOULD_NOT_LEAK;
    expect(plan.command).toBe('/opt/node24/bin/node');
    const patch = join(l.home, '.roller-dsh-patch.yml');
    expect(plan.args).toEqual([join(prefix, 'node_modules', '@deepseek-ai', 'dsh', 'lib', 'bin.js'), '--profile', 'headless', '--patch', patch, '[HELLO] hi']);
    expect(plan.env).toMatchObject({ HOME: l.home, TMPDIR: join(l.home, 'tmp'), DEEPSEEK_BASE_URL: 'http://127.0.0.1:9999', DEEPSEEK_SEARCH_BASE_URL: 'http://127.0.0.1:9999', DEEPSEEK_API_KEY: 'sk-unit-0000', DSH_PERMISSION_MODE: 'danger-full-access', DSH_TELEMETRY_DISABLED: '1' });
    expect(plan.env.PATH!.startsWith('/opt/node24/bin:')).toBe(true);
    expect(plan.env.ROLLER_SHOULD_NOT_LEAK).toBeUndefined();
    // The driver beside node_modules (dsh's packages resolve from there), named by the overlay in place of headless-runner.
    const driver = join(prefix, 'roller-dsh-driver.mts'); // from source: driver.ts (the build copies driver.js as .mjs)
    expect(readFileSync(driver, 'utf8')).toContain("export const name = 'roller-headless-runner'");
    const overlay = readFileSync(patch, 'utf8');
    expect(overlay).toContain('- id: headless-runner\n  disabled: true');
    expect(overlay).toContain(`name: ${JSON.stringify(driver)}`);
    // The key is in the environment only, never in a file roller writes.
    expect(overlay).not.toContain('sk-unit-0000');
  });

  it("only where asked, a second delegation tool whose children may not run commands or write: a row of dsh's own dsh-tool-subagent", async () => {
    const { bin } = install();
    const plain = launch(bin);
    await deepSeekPlan(plain);
    expect(readFileSync(join(plain.home, '.roller-dsh-patch.yml'), 'utf8')).not.toContain('subagent_reader');
    const reader = launch(bin);
    await deepSeekPlan({ ...reader, readerTool: true });
    const overlay = readFileSync(join(reader.home, '.roller-dsh-patch.yml'), 'utf8');
    expect(overlay).toContain("name: '@deepseek-ai/dsh-tool-subagent'");
    expect(overlay).toContain('toolName: subagent_reader');
    expect(overlay).toMatch(/toolFilter: \{ deny: \[.*"bash".*"write".*"edit".*\] \}/);
  });

  it('a second launch keeps the driver as it is; a stale one is replaced whole', async () => {
    const { prefix, bin } = install();
    await deepSeekPlan(launch(bin));
    const driver = join(prefix, 'roller-dsh-driver.mts'); // from source: driver.ts (the build copies driver.js as .mjs)
    const first = readFileSync(driver, 'utf8');
    writeFileSync(driver, 'stale');
    await deepSeekPlan(launch(bin));
    expect(readFileSync(driver, 'utf8')).toBe(first);
  });

  it('a prompt past what one argument holds is refused before anything runs, saying the limit', async () => {
    const { bin } = install();
    const err = await deepSeekPlan(launch(bin, 'x'.repeat(DSH_MAX_PROMPT_BYTES + 1))).catch((e: unknown) => e);
    expect(isRollerError(err)).toBe(true);
    expect((err as Error).message).toMatch(/takes the task as one argument, at most 131071 bytes/);
  });
});
