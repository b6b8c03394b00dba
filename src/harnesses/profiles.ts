import { ErrorCode, RollerError } from '../core/errors.js';
import type { HarnessAdapter, HarnessProfile, HarnessRunner } from './adapter.js';

/** One collect option that harness profiles declare: a flag (one profile), or an option taking one value per profile. */
export interface ProfileOption {
  harness: string;
  option: string;
  profiles: readonly HarnessProfile[];
}

/** The collect options the adapters' profiles declare, one per option name. */
export function profileOptions(adapters: readonly HarnessAdapter[]): ProfileOption[] {
  const options = new Map<string, { harness: string; option: string; profiles: HarnessProfile[] }>();
  for (const adapter of adapters) {
    for (const profile of adapter.runner?.profiles ?? []) {
      const known = options.get(profile.option);
      if (known && known.harness !== adapter.name) throw new RollerError(ErrorCode.INVALID_OPTIONS, `harnesses ${known.harness} and ${adapter.name} both declare the collect option ${profile.option}: rename one of them`);
      if (known) known.profiles.push(profile);
      else options.set(profile.option, { harness: adapter.name, option: profile.option, profiles: [profile] });
    }
  }
  return [...options.values()];
}

/** Whether the option takes a value (its profiles name one each) or is a flag. */
export const takesValue = (o: ProfileOption) => o.profiles.some((p) => p.value !== undefined);

/** The profile a given value of the option selects, or a typed error listing the values it takes. */
export function profileOfValue(o: ProfileOption, value: string | true): HarnessProfile {
  const profile = o.profiles.find((p) => (p.value ?? true) === value);
  if (!profile) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${o.option} ${String(value)}: ${o.harness} takes ${o.profiles.map((p) => p.value).join(' or ')}`);
  return profile;
}

/** The collect arguments that select a profile (what --resume's command line writes back); none for the default. */
export function profileArgs(adapter: HarnessAdapter, name: string | null | undefined): string[] {
  if (!name) return [];
  const profile = adapter.runner?.profiles?.find((p) => p.name === name);
  return profile ? [profile.option, ...(profile.value !== undefined ? [profile.value] : [])] : [];
}

/** A profile the harness does not declare is refused, naming those it does. */
export function checkProfile(harness: string, runner: HarnessRunner, name: string | null | undefined): void {
  if (!name) return;
  const known = (runner.profiles ?? []).flatMap((p) => (p.name ? [p.name] : []));
  if (!known.includes(name)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `harness profile '${name}': ${harness} has ${known.length > 0 ? `these: ${known.join(', ')}` : 'none'}`);
}
