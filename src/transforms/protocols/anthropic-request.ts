type Json = Record<string, any>;

/** The tools of a request as the ACTF / SFT tools schema spells them (nested function schemas). */
export function anthropicTools(body: Json): Json[] {
  return ((body.tools ?? []) as Json[]).map((t) =>
    t.input_schema !== undefined || t.type === undefined || t.type === 'custom'
      ? { type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema ?? { type: 'object' } } }
      : t,
  );
}

/** The top-level system prompt of a request as one string. */
export function anthropicSystem(body: Json): string {
  return typeof body.system === 'string' ? body.system : Array.isArray(body.system) ? (body.system as Json[]).map((b) => String(b.text ?? '')).join('\n\n') : '';
}
