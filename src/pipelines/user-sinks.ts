import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ErrorCode, RollerError } from '../core/errors.js';
import { formatJsonPath } from '../core/json-locate.js';
import type { Sink } from '../core/stage.js';
import type { Call } from '../schemas/call.js';
import type { FinishedSample } from '../schemas/finished-sample.js';
import { checkValue } from '../schemas/validate.js';
import { sinks as registry, type SinkName } from '../sinks/index.js';
import { DEFAULT_SINK_DEADLINES, SinkFeed, type SinkDeadlines, type SinkFailure, type SinkModule, type UserSinks } from '../sinks/user-sink.js';

/** A sink named on the command line: a registered sink's name, or a module path / package name; and its options. */
export interface SinkSpec {
  spec: string;
  options?: Record<string, unknown>;
  /**
   * Options by sink name (`--sink-option name.key=value`, an options file): a module's are found by the name it
   * declares once it is loaded (its file name too); a name no sink answers to is an error before anything runs.
   */
  named?: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * `--sink SPEC` (repeatable) with `--sink-option name.key=value` and an options file `{"name": {...}}`: each sink's
 * options, by the name it is known by (a registered name, the name its module declares, or its file name without
 * extension; matched when the sinks are opened). A value that parses as JSON is taken as JSON (numbers, booleans,
 * objects), anything else as a string.
 */
export function sinkSpecs(specs: readonly string[], options: readonly string[] = [], file: Record<string, Record<string, unknown>> = {}): SinkSpec[] {
  const given = new Map<string, Record<string, unknown>>(Object.entries(file).map(([k, v]) => [k, { ...v }]));
  for (const o of options) {
    const m = /^([^.=]+)\.([^=]+)=(.*)$/s.exec(o);
    if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink-option '${o}': expected name.key=value (e.g. sqlite.path=runs.db)`);
    const [, name, key, raw] = m as unknown as [string, string, string, string];
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // a plain string
    }
    given.set(name, { ...(given.get(name) ?? {}), [key]: value });
  }
  const named = Object.fromEntries(given);
  if (specs.length === 0 && given.size > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `options for ${[...given.keys()].map((u) => `'${u}'`).join(', ')}, but no --sink`);
  return specs.map((spec) => ({ spec, named }));
}

/** A calls sink in a run that captures no calls would get none, silently: refused, naming the fix. */
export async function refuseCallSinksWithoutCalls(user: UserSinkSet, fix: string): Promise<void> {
  if (user.callSinks.length === 0) return;
  await user.end();
  throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink ${user.callSinks.join(', ')}: it takes calls, and this run captures none, so it would get nothing; ${fix}`);
}

/** --sink-timeout S: one deadline for an item and for finishing. */
export const sinkDeadlines = (seconds: number | undefined): SinkDeadlines => (seconds === undefined ? DEFAULT_SINK_DEADLINES : { itemMs: seconds * 1000, endMs: seconds * 1000 });

/** A user's sinks for one run, each fed through its own SinkFeed. */
export interface UserSinkSet {
  readonly names: readonly string[];
  /** Whether any of them takes finished samples (convert has none to give). */
  readonly takesSamples: boolean;
  /** The sinks that take calls (a run without captured calls has none to give them). */
  readonly callSinks: readonly string[];
  /** A finished sample: its published calls to the call sinks, then itself to the sample sinks (in request order). */
  add(sample: FinishedSample): Promise<void>;
  /** Calls not of a finished sample (convert's --wire calls, attributed to the converted session). */
  addCalls(calls: Iterable<Call> | AsyncIterable<Call>, label: string): Promise<void>;
  /** The run is over: each sink finishes and reports; the failures (a sink that threw), by sink and sample. */
  end(): Promise<SinkFailure[]>;
}

/**
 * Opens the sinks a run is given — by spec (a registered calls or samples sink, or a module exporting a SinkModule as
 * `default` or `sink`) or as objects (the library's `sinks` option) — checking every one's options before anything
 * runs. Modules resolve from `cwd` (a path relative to it, or a package installed there). A sink past its `deadlines`
 * (one item, or finishing) is reported as failed and no longer waited for.
 */
export async function openUserSinks(specs: readonly SinkSpec[], objects: readonly UserSinks[] = [], cwd = process.cwd(), deadlines: SinkDeadlines = DEFAULT_SINK_DEADLINES): Promise<UserSinkSet> {
  const opened: { name: string; sinks: UserSinks }[] = objects.map((s, i) => ({ name: s.calls?.name ?? s.samples?.name ?? `sink-${i + 1}`, sinks: s }));
  // Every module loaded and named first: options for a name no sink answers to are refused before any sink is made.
  const resolved: ResolvedSpec[] = [];
  for (const s of specs) resolved.push(await resolveSpec(s, cwd));
  const answered = new Set(resolved.flatMap((r) => r.answersTo));
  const unused = [...new Set(specs.flatMap((s) => Object.keys(s.named ?? {})))].filter((n) => !answered.has(n));
  if (unused.length > 0) {
    const names = [...opened.map((o) => o.name), ...resolved.map((r) => r.name)];
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `options for ${unused.map((u) => `'${u}'`).join(', ')}, but no --sink of that name (sinks: ${names.join(', ') || 'none'})`);
  }
  for (const r of resolved) opened.push({ name: r.name, sinks: await r.create() });
  const calls = opened.filter((o) => o.sinks.calls).map((o) => new SinkFeed<Call>(o.sinks.calls!, undefined, 16, deadlines));
  const samples = opened.filter((o) => o.sinks.samples).map((o) => new SinkFeed<FinishedSample>(o.sinks.samples!, undefined, 16, deadlines));
  const unread: SinkFailure[] = [];
  const addCalls = async (source: Iterable<Call> | AsyncIterable<Call>, label: string) => {
    try {
      if (calls.length > 0) for await (const call of source) for (const f of calls) await f.push(call, label);
    } catch (err) {
      // The calls could not be read: said against the call sinks, the run goes on.
      for (const o of opened.filter((x) => x.sinks.calls)) unread.push({ sink: o.name, at: label, message: `its calls could not be read: ${(err as Error).message}` });
    }
  };
  return {
    names: opened.map((o) => o.name),
    takesSamples: samples.length > 0,
    callSinks: opened.filter((o) => o.sinks.calls).map((o) => o.name),
    async add(sample) {
      if (calls.length > 0) await addCalls(sample.calls(), sample.dir);
      for (const f of samples) await f.push(sample, sample.dir);
    },
    addCalls,
    async end() {
      const outcomes = await Promise.all([...calls, ...samples].map((f) => f.end()));
      return [...unread, ...outcomes.filter((o): o is SinkFailure => 'message' in o && 'sink' in o)];
    },
  };
}

/** A spec loaded: the name it goes by, the names its options may be given under, and how to make its sinks. */
interface ResolvedSpec {
  name: string;
  answersTo: string[];
  create(): Promise<UserSinks>;
}

async function resolveSpec(s: SinkSpec, cwd: string): Promise<ResolvedSpec> {
  const optionsFor = (names: readonly string[]) => s.options ?? names.map((n) => s.named?.[n]).find((o) => o !== undefined) ?? {};
  if (s.spec in registry) {
    const def = registry[s.spec as SinkName];
    if (def.input !== 'calls' && def.input !== 'samples') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink ${s.spec}: it writes one file family of a sample (${def.input}); a run's sink takes calls or samples`);
    return {
      name: s.spec,
      answersTo: [s.spec],
      async create() {
        const sink = (def.create as (o: unknown) => Sink<never>)(checkedOptions(s.spec, s.spec, def.options, optionsFor([s.spec])));
        return def.input === 'calls' ? { calls: sink as Sink<Call> } : { samples: sink as Sink<FinishedSample> };
      },
    };
  }
  const mod = await importSink(s.spec, cwd);
  const fileName = basename(s.spec, extname(s.spec));
  const name = mod.name ?? fileName;
  const answersTo = [...new Set([name, fileName])];
  return {
    name,
    answersTo,
    async create() {
      const options = optionsFor(answersTo);
      const made = await mod.create(mod.options ? checkedOptions(s.spec, name, mod.options, options) : options);
      if (!made || (!made.calls && !made.samples)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink ${s.spec}: its create() gave neither a calls nor a samples sink`);
      return made;
    },
  };
}

function checkedOptions(spec: string, name: string, schema: Parameters<typeof checkValue>[0], options: Record<string, unknown>): unknown {
  const issues = checkValue(schema, options);
  if (issues.length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink ${spec}: its options are not valid: ${issues.map((i) => `${formatJsonPath(i.path)}: ${i.message}`).join('; ')} (give them with --sink-option ${name}.key=value)`);
  return (schema as { parse(v: unknown): unknown }).parse(options);
}

async function importSink(spec: string, cwd: string): Promise<SinkModule> {
  let url: string;
  if (spec.startsWith('.') || spec.startsWith('/')) url = pathToFileURL(resolve(cwd, spec)).href;
  else {
    try {
      url = pathToFileURL(createRequire(join(cwd, 'noop.js')).resolve(spec)).href;
    } catch {
      url = spec; // an ESM-only package, resolved by import itself
    }
  }
  let mod: Record<string, unknown>;
  try {
    await letSinksImportRoller();
    mod = (await import(url)) as Record<string, unknown>;
  } catch (err) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink ${spec}: the module could not be loaded (${(err as Error).message}); give a registered calls or samples sink (${Object.entries(registry).filter(([, d]) => d.input === 'calls' || d.input === 'samples').map(([n]) => n).join(', ')}; roller sinks lists them), a path, or an installed package`, { cause: err });
  }
  const def = (mod.default ?? mod.sink) as SinkModule | undefined;
  if (!def || typeof def.create !== 'function') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink ${spec}: the module exports no sink (a default or \`sink\` export with create(options) => { calls?, samples? })`);
  return def;
}

let selfResolution: Promise<void> | undefined;

/** A sink file anywhere (outside any project with agent-roller installed) imports `agent-roller`: this roller. */
function letSinksImportRoller(): Promise<void> {
  selfResolution ??= (async () => {
    const { register } = await import('node:module');
    // Compiled (dist) next to this module; under vitest the .ts source, which the hook thread cannot load: not needed there.
    const hooks = new URL('./self-resolve-hooks.js', import.meta.url);
    if (existsSync(fileURLToPath(hooks))) register(hooks.href);
  })();
  return selfResolution;
}
