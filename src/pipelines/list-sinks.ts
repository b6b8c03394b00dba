import { z } from 'zod';
import { sinks, type SinkInput } from '../sinks/index.js';

export interface ListedSink {
  name: string;
  input: SinkInput;
  /** Whether `--sink NAME` takes it in a run (calls and samples sinks); the others write one file family of a sample. */
  runSink: boolean;
  description: string | null;
  /** Its options: each name, its type and description (from the zod schema, as JSON Schema). */
  options: { name: string; type: string; required: boolean; description: string | null }[];
}

/** The registered sinks with their options (`roller sinks`), read from their schemas. */
export function listSinks(): ListedSink[] {
  return Object.entries(sinks).map(([name, def]) => {
    const schema = z.toJSONSchema(def.options, { unrepresentable: 'any', io: 'input' }) as { description?: string; properties?: Record<string, { type?: string | string[]; description?: string; anyOf?: { type?: string }[] }>; required?: string[] };
    const properties = Object.entries(schema.properties ?? {}).map(([key, p]) => ({
      name: key,
      type: [p.type ?? p.anyOf?.map((a) => a.type).filter(Boolean)].flat().filter(Boolean).join(' | ') || 'any',
      required: schema.required?.includes(key) ?? false,
      description: p.description ?? null,
    }));
    return { name, input: def.input, runSink: def.input === 'calls' || def.input === 'samples', description: schema.description ?? null, options: properties };
  });
}
