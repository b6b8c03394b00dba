import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Call } from '../../schemas/call.js';
import { ErrorCode } from '../../core/errors.js';

/**
 * Key custody in collect: every process roller starts gets a stand-in credential, made anew per attempt; the
 * attempt's recording proxy alone holds the real key. A stand-in is worth nothing once its proxy closed.
 */
export function newStandIn(): string {
  return `roller-stand-in-${randomBytes(24).toString('base64url')}`;
}

export interface ProxyAdmission {
  /** Requests the proxy recorded. */
  calls: number;
  /** Of them, model calls refused for not carrying the stand-in. */
  refused: number;
  /** Other requests refused so (a harness's probes of what server it talks to, sent without a key: Hermes's). */
  refusedProbes: number;
}

/**
 * How many requests reached the attempt's proxy, and how many it refused (by the error each refused call records):
 * a refused model call says something else set the harness's credential; a refused probe of a path no model protocol
 * has (`GET /api/tags`, `/props`) only that the harness asks it without one.
 */
export function proxyAdmission(calls: readonly Call[]): ProxyAdmission {
  const refused = calls.filter((c) => c.errors.some((e) => e.code === ErrorCode.CREDENTIAL_REFUSED));
  const probes = refused.filter((c) => c.protocol === 'other').length;
  return { calls: calls.length, refused: refused.length - probes, refusedProbes: probes };
}

/**
 * A harness that called its model anywhere but through its proxy with roller's stand-in: something other than roller
 * set its endpoint or credential (a task file, a planted config, the agent itself). Undefined when it did not.
 */
export function bypassMessage(admission: ProxyAdmission, configFiles: readonly string[]): string | undefined {
  const admitted = admission.calls - admission.refused;
  if (admission.refused === 0 && admitted > 0) return undefined;
  const where = configFiles.length > 0 ? ` (look for ${configFiles.join(', ')})` : '';
  const what =
    admission.refused > 0
      ? `${admission.refused} request(s) reached roller's proxy without the stand-in credential roller gave the harness, and were refused`
      : "the harness made no model call through roller's recording proxy";
  return `${what}: its model endpoint or credential was set by something other than roller — a task file, a configuration in the work directory or HOME${where}, or the agent itself. Nothing it sent elsewhere was recorded, and roller's key was never in its reach`;
}

/** Which of the harness's configuration files exist in the work dir after a run (a task may not write them: the agent did). */
export async function plantedConfigFiles(work: string, configFiles: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const f of configFiles) if (await lstat(join(work, f)).then(() => true, () => false)) found.push(f);
  return found;
}

/** Each file's state (absent, a link, its digest), read without following a link, to see what a run changed. */
export async function configStates(root: string, files: readonly string[]): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  for (const f of files) states.set(f, await stateOf(join(root, f)));
  return states;
}

/** The files whose state differs from `before` now: written, removed or replaced by a link during the run. */
export async function changedConfigFiles(root: string, before: Map<string, string>): Promise<string[]> {
  const now = await configStates(root, [...before.keys()]);
  return [...before].filter(([f, state]) => now.get(f) !== state).map(([f]) => f);
}

async function stateOf(path: string): Promise<string> {
  const st = await lstat(path).catch(() => null);
  if (!st) return 'absent';
  if (!st.isFile()) return `not a file (${st.mode})`;
  if (st.size > 1 << 20) return `size ${st.size}, mtime ${st.mtimeMs}`; // a config this large is already not roller's
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
  if (!handle) return 'unreadable';
  try {
    return createHash('sha256').update(await handle.readFile()).digest('hex');
  } finally {
    await handle.close();
  }
}
