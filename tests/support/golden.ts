import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import stringify from 'fast-json-stable-stringify';
import { expect } from 'vitest';

/**
 * Compare text with a reviewed golden file; UPDATE_GOLDEN=1 rewrites it (a reviewer then reads the diff).
 * JSON is compared in stable key order so that only content, not serialization order, matters.
 */
export async function expectGolden(path: string, actual: string): Promise<void> {
  if (process.env.UPDATE_GOLDEN === '1') {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, actual);
    return;
  }
  const expected = await readFile(path, 'utf8').catch(() => {
    throw new Error(`golden file ${path} is missing; run with UPDATE_GOLDEN=1 and review it`);
  });
  expect(actual).toBe(expected);
}

export function stableJson(value: unknown): string {
  return `${stringify(value)}\n`;
}

export function stableJsonl(text: string): string {
  return text
    .trim()
    .split('\n')
    .map((l) => stringify(JSON.parse(l)))
    .join('\n')
    .concat('\n');
}
