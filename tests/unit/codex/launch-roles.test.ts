/** Codex agent roles in roller's launch config (the verify scenario "sub-agents with different tool configurations"). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexConfig, codexPlan } from '../../../src/harnesses/codex/launch.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('codex-roles');

describe('codex launch: agent roles', () => {
  it('config.toml names each role with its description and role file; the role file is written beside it', async () => {
    const home = join(tmp.path, 'home');
    await codexPlan({ bin: 'codex', prompt: 'p', home, work: tmp.path, baseUrl: 'http://127.0.0.1:1', apiKey: 'k', roles: { reader: { description: 'Reads "files".', config: '[features]\nshell_tool = false\n' } } });
    const config = readFileSync(join(home, 'config.toml'), 'utf8');
    expect(config).toContain('[agents.reader]\ndescription = "Reads \\"files\\"."\nconfig_file = "reader.toml"\n');
    expect(readFileSync(join(home, 'reader.toml'), 'utf8')).toBe('[features]\nshell_tool = false\n');
  });

  it('no roles: no [agents] table (spawn_agent then offers no agent_type)', () => {
    expect(codexConfig({ baseUrl: 'http://127.0.0.1:1' })).not.toContain('[agents');
  });

  it('[agents] max_depth beside the roles: a child may spawn in turn', () => {
    const config = codexConfig({ baseUrl: 'http://127.0.0.1:1', agentsMaxDepth: 2, roles: { reader: { description: 'r', config: '' } } });
    expect(config).toContain('[agents]\nmax_depth = 2\n\n[agents.reader]\n');
  });

  it('a role name that is no TOML bare key is refused', async () => {
    await expect(codexPlan({ bin: 'codex', prompt: 'p', home: join(tmp.path, 'h2'), work: tmp.path, baseUrl: 'http://127.0.0.1:1', apiKey: 'k', roles: { 'a b': { description: 'x', config: '' } } })).rejects.toThrow(/lowercase letters/);
  });
});
