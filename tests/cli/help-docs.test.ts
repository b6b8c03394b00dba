/**
 * The command pages (docs/commands/*.md) cannot drift from the CLI: each holds the --help of its commands verbatim,
 * compared here, and every command `roller --help` lists has a page. `ROLLER_UPDATE_DOCS=1 npx vitest run
 * tests/cli/help-docs.test.ts` writes the current help into the pages (then read the diff).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';
import { spawnSync } from 'node:child_process';
import { rollerBin } from '../support/paths.js';
import { roller } from '../support/roller-cli.js';

const pages = join(repoRoot, 'docs', 'commands');
const MARKER = /<!-- help: roller ([a-z0-9 -]+?) -->\n```text\n([\s\S]*?)```/g;
const update = process.env.ROLLER_UPDATE_DOCS === '1';

/**
 * `roller WORDS --help` as it prints into a pipe (80 columns), for a user whose HOME is /home/you: defaults that name a
 * path (the harness cache) are the same on every machine.
 */
async function help(words: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: '/home/you' };
  delete env.XDG_CACHE_HOME;
  delete env.ROLLER_CACHE_DIR;
  const { stdout } = spawnSync(rollerBin, [...words, '--help'], { env, encoding: 'utf8' });
  return stdout.trimEnd() + '\n';
}

describe('docs/commands against --help', () => {
  const files = readdirSync(pages).filter((f) => f.endsWith('.md'));

  it.each(files)('%s holds the --help of its commands as the CLI prints it', async (file) => {
    const path = join(pages, file);
    const text = readFileSync(path, 'utf8');
    const blocks = [...text.matchAll(MARKER)];
    expect(blocks.length, `${file} has no help block`).toBeGreaterThan(0);
    let next = text;
    for (const [whole, words, body] of blocks) {
      const current = await help(words!.split(' '));
      if (update) next = next.replace(whole!, `<!-- help: roller ${words} -->\n\`\`\`text\n${current}\`\`\``);
      else expect(body, `${file}: roller ${words} --help changed; run ROLLER_UPDATE_DOCS=1 npx vitest run tests/cli/help-docs.test.ts`).toBe(current);
    }
    if (update && next !== text) writeFileSync(path, next);
  });

  it('every command roller --help lists has a page with its help', async () => {
    const listed = (await help([])).split('Commands:')[1]!.split('\n').map((l) => /^ {2}([a-z][a-z0-9-]*)/.exec(l)?.[1]).filter((c): c is string => c !== undefined && c !== 'help');
    const documented = new Set(files.flatMap((f) => [...readFileSync(join(pages, f), 'utf8').matchAll(MARKER)].map((m) => m[1]!.split(' ')[0]!)));
    expect(listed.filter((c) => !documented.has(c))).toEqual([]);
  });

  it('a usage error (unknown option, missing or bad value) exits 2, as the README says; help and --version exit 0', async () => {
    for (const args of [['collect', '--no-such-option'], ['collect'], ['collect', '--tasks', 't.jsonl', '--concurrency', '0'], ['no-such-command']]) {
      const r = await roller(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^error: /);
    }
    expect((await roller('--version')).code).toBe(0);
    expect((await roller('collect', '--help')).code).toBe(0);
  });

  it('the README is short (12 KB at most) and every page it links to is there', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024);
    const links = [...readme.matchAll(/\]\(([^)#]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((l) => !existsSync(join(repoRoot, l)))).toEqual([]);
  });
});
