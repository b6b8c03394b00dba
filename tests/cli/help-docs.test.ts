/**
 * The README's command table and the CLI's own --help say the same options: each command's synopsis in the table
 * names every option its --help lists, and no option --help does not know (help drift is a test failure).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';
import { roller } from '../support/roller-cli.js';

const IGNORED = new Set(['--help', '--version']);

/** The README table's rows: the command words of each synopsis, and the options the synopsis names. */
function documented(): { words: string[]; options: Set<string> }[] {
  const rows: { words: string[]; options: Set<string> }[] = [];
  for (const line of readFileSync(join(repoRoot, 'README.md'), 'utf8').split('\n')) {
    if (!line.startsWith('| `roller ')) continue;
    const cell = line.slice(2, line.indexOf(' | ', 2));
    // A cell may hold several synopses (`roller harness install …` / `roller harness list`): each its own command.
    for (const synopsis of cell.split(/`\s*\/\s*`/)) {
      const text = synopsis.replace(/`/g, '');
      const words = text.split(/\s+/).slice(1).filter((w, i, all) => /^[a-z][a-z-]*$/.test(w) && all.slice(0, i).every((x) => /^[a-z][a-z-]*$/.test(x)));
      const options = [...text.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]).filter((o) => !IGNORED.has(o));
      // Two rows of one command (roller usage DIR, roller usage --harness …): one --help, their options together.
      const same = rows.find((r) => r.words.join(' ') === words.join(' '));
      if (same) for (const o of options) same.options.add(o);
      else rows.push({ words, options: new Set(options) });
    }
  }
  return rows;
}

async function helpOptions(words: string[]): Promise<Set<string>> {
  const { stdout } = await roller(...words, '--help');
  const options = stdout.slice(stdout.indexOf('Options:'), stdout.indexOf('Commands:') > 0 ? stdout.indexOf('Commands:') : undefined);
  // The flag column only (an option's description may name another CLI's flags).
  return new Set([...options.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((o) => !IGNORED.has(o)));
}

describe('README command table against --help', () => {
  const rows = documented();
  it('documents the commands', () => {
    expect(rows.map((r) => r.words.join(' '))).toEqual(expect.arrayContaining(['collect', 'reprocess', 'convert', 'proxy', 'verify', 'usage', 'harness install']));
  });
  it.each(rows.map((r) => [r.words.join(' '), r] as const))('roller %s: the synopsis names exactly the options --help lists', async (_name, row) => {
    const help = await helpOptions(row.words);
    expect({ undocumented: [...help].filter((o) => !row.options.has(o)).sort(), unknown: [...row.options].filter((o) => !help.has(o)).sort() }).toEqual({ undocumented: [], unknown: [] });
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
});
