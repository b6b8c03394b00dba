/**
 * A module-resolution hook (node:module register): `agent-roller` imported by a user's sink file that has no
 * agent-roller of its own (a file outside any project that installed it) resolves to the roller that is running,
 * by the package's self-reference. One that has its own installed keeps it.
 */
type Resolved = { url: string; format?: string | null; shortCircuit?: boolean };
type Next = (specifier: string, context: { parentURL?: string; conditions?: string[] }) => Promise<Resolved>;

export async function resolve(specifier: string, context: { parentURL?: string; conditions?: string[] }, next: Next): Promise<Resolved> {
  try {
    return await next(specifier, context);
  } catch (err) {
    const own = specifier === 'agent-roller' || specifier.startsWith('agent-roller/');
    if (!own || (err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    // This file is inside the package: from here, the name refers to the package itself (its "exports").
    return next(specifier, { ...context, parentURL: import.meta.url });
  }
}
