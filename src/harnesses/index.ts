import type { Call } from '../schemas/call.js';
/**
 * The harness registry: name -> adapter (adapter.ts). Adding a harness is its folder and one line here; a script
 * or a test can register one of its own with registerHarness (explicitly: nothing registers itself on import).
 */
import { ErrorCode, RollerError } from '../core/errors.js';
import type { CorrelationHeaders } from '../sources/proxy/headers.js';
import type { DeliveryRecogniser } from '../transforms/capture/evidence.js';
import type { HarnessAdapter, HarnessRunner } from './adapter.js';
import { claudeCodeAdapter } from './claude-code/adapter.js';
import { codexAdapter } from './codex/adapter.js';
import { deepSeekAdapter } from './deepseek/adapter.js';
import { hermesAdapter } from './hermes/adapter.js';
import { openClawAdapter } from './openclaw/adapter.js';
import { openCodeAdapter } from './opencode/adapter.js';
import { piAdapter } from './pi/adapter.js';

const shipped = [claudeCodeAdapter, codexAdapter, openCodeAdapter, piAdapter, openClawAdapter, hermesAdapter, deepSeekAdapter];
const registry = new Map<string, HarnessAdapter>(shipped.map((a) => [a.name, a]));

/** Adds (or replaces) an adapter: for a harness roller does not ship, or a test's. */
export function registerHarness(adapter: HarnessAdapter): void {
  registry.set(adapter.name, adapter);
}

/** Whether this adapter is one roller ships (not one a script or a test registered). */
export function isShippedAdapter(adapter: HarnessAdapter): boolean {
  return shipped.includes(adapter);
}

export function harnessNames(): string[] {
  return [...registry.keys()];
}

/** The adapter registered under a name, if any. */
export function findHarness(name: string): HarnessAdapter | undefined {
  return registry.get(name);
}

/** The delivery evidence of a registered harness, as an option object (none for a harness without, or unknown). */
export function deliveryOf(name: string): { delivery?: DeliveryRecogniser } {
  const delivery = registry.get(name)?.delivery;
  return delivery ? { delivery } : {};
}

/** A registered harness's auxiliary-call test (its title requests), for finalizeNativeCapture. */
export function auxiliaryOf(name: string): { auxiliary?: (call: Call) => boolean } {
  const aux = registry.get(name)?.auxiliaryCall;
  return aux ? { auxiliary: (call) => aux.test(call) } : {};
}

/** The adapter of a harness, or a typed error listing the known ones. */
export function harnessAdapter(name: string): HarnessAdapter {
  const adapter = registry.get(name);
  if (!adapter) throw new RollerError(ErrorCode.INVALID_OPTIONS, `unknown harness '${name}' (known: ${harnessNames().join(', ')})`);
  return adapter;
}

/** The adapters roller can run (collect): those with a runner and a capture contract. */
export function runnableHarnesses(): string[] {
  return [...registry.values()].filter((a) => a.runner && a.nativeCapture).map((a) => a.name);
}

/** The harnesses `roller verify` can run: those whose runner lists acceptance scenarios. */
export function verifiableHarnesses(): string[] {
  return [...registry.values()].filter((a) => a.runner?.verify).map((a) => a.name);
}

/** A harness's verify scenarios and version-matrix names, or a typed error naming those that have them. */
export function verifyOf(name: string): NonNullable<HarnessRunner['verify']> {
  const verify = harnessAdapter(name).runner?.verify;
  if (!verify) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${name}: roller has no acceptance scenarios for it (roller verify runs: ${verifiableHarnesses().join(', ')})`);
  return verify;
}

export type { HarnessAdapter } from './adapter.js';

/**
 * The recording proxy's header tables: every registered harness's identity headers (forwarded, recorded: a proxy
 * records whichever harness talks through it), and the correlation headers of the harness run, if one is named (removed).
 */
export function proxyHeaders(name?: string): { identityHeaders: CorrelationHeaders; correlationHeaders?: CorrelationHeaders } {
  const identityHeaders = Object.assign({}, ...[...registry.values()].map((a) => a.identityHeaders ?? {})) as CorrelationHeaders;
  const correlation = name === undefined ? undefined : harnessAdapter(name).correlationHeaders;
  return { identityHeaders, ...(correlation ? { correlationHeaders: correlation } : {}) };
}
