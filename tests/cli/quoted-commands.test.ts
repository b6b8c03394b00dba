/**
 * Every roller command quoted in README.md and docs/ — code blocks and inline code — names a command the CLI has and
 * only options that command takes (those after `--` of slurm and k8s: collect's). A renamed or removed option cannot
 * linger in the docs a newcomer copies from.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { repoRoot } from '../support/paths.js';

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [path] : [];
  });
}

/** The shell-like snippets of a page: lines of its non-text code blocks (continuations joined), and its inline code. */
function snippets(text: string): string[] {
  const out: string[] = [];
  const prose = text.replace(/```([a-z]*)\n([\s\S]*?)```/g, (_, lang: string, body: string) => {
    if (lang === '' || lang === 'bash' || lang === 'sh' || lang === 'console') out.push(...body.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.replace(/(^|\s)#.*$/, '')));
    return '';
  });
  for (const m of prose.matchAll(/`([^`\n]+)`/g)) out.push(m[1]!);
  return out;
}

/** Each `roller WORDS…` in a snippet, as its words up to where the command ends (a pipe, &&, ;, a comment, a redirect). */
function invocations(snippet: string): string[][] {
  const found: string[][] = [];
  for (const m of snippet.matchAll(/(?:^|[\s($;&|])(?:npx\s+)?roller\s+(?=[a-z])/g)) {
    const rest = snippet.slice(m.index! + m[0].length);
    const words: string[] = [];
    for (const t of rest.match(/"[^"]*"|'[^']*'|\S+/g) ?? []) {
      if (/^(\||\|\||&&|;|#|\)|>|2>|<|\$\()/.test(t)) break;
      words.push(t.replace(/^\[+|[\].,;:]+$/g, '').replace(/\.\.\.$|…$/, ''));
      if (/[);]$/.test(t)) break;
    }
    found.push(words);
  }
  return found;
}

function optionNames(cmd: Command): Set<string> {
  return new Set(['--help', ...cmd.options.flatMap((o) => [o.long, o.short].filter((n): n is string => !!n))]);
}

describe('commands quoted in the README and docs/', () => {
  const program = buildProgram();
  const pages = [join(repoRoot, 'README.md'), ...markdownFiles(join(repoRoot, 'docs'))];

  it('name a command roller has, and options it takes', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const where = relative(repoRoot, page);
      for (const snippet of snippets(readFileSync(page, 'utf8'))) {
        for (const words of invocations(snippet)) {
          let cmd = program.commands.find((c) => c.name() === words[0]);
          if (!cmd) {
            problems.push(`${where}: \`roller ${words.join(' ')}\`: no command ${words[0]}`);
            continue;
          }
          let rest = words.slice(1);
          const sub = cmd.commands.find((c) => c.name() === rest[0]);
          if (sub) [cmd, rest] = [sub, rest.slice(1)];
          let allowed = optionNames(cmd);
          for (const w of rest) {
            if (w === '--') {
              allowed = optionNames(program.commands.find((c) => c.name() === 'collect')!); // slurm/k8s pass the rest to collect
              continue;
            }
            const name = /^(--[a-z][a-z0-9-]*|-[a-zA-Z])(=|$)/.exec(w)?.[1];
            if (name && !allowed.has(name)) problems.push(`${where}: \`roller ${words.join(' ')}\`: ${cmd.name()} takes no ${name}`);
          }
          checked++;
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('cite the specification only where docs/spec.md says what the cited part holds (its text is not in this repository)', () => {
    const spec = readFileSync(join(repoRoot, 'docs', 'spec.md'), 'utf8');
    const missing = new Set<string>();
    for (const page of pages.filter((p) => !p.endsWith('spec.md'))) {
      for (const m of readFileSync(page, 'utf8').matchAll(/seeds\/(\d{3})(?: (§[\d.]+))?/g)) {
        if (!spec.includes(`seeds/${m[1]}`)) missing.add(`${relative(repoRoot, page)}: seeds/${m[1]}`);
        if (m[2] && !spec.includes(`**${m[2]} `)) missing.add(`${relative(repoRoot, page)}: seeds/${m[1]} ${m[2]}`);
      }
    }
    expect([...missing]).toEqual([]);
  });
});
