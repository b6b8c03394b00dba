/** Release numbers as the harnesses publish them (major.minor.patch, numeric; a pre-release tag sorts first). */
export function compareReleases(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.split('-', 2);
    return { parts: core.split('.').map((x) => Number.parseInt(x, 10) || 0), pre: pre ?? null };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i++) {
    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre === y.pre) return 0;
  return x.pre === null ? 1 : y.pre === null ? -1 : x.pre < y.pre ? -1 : 1;
}

/** `version` is `since` or later; an unknown version (undefined) is taken as the newest. */
export const releasedSince = (version: string | undefined, since: string): boolean => version === undefined || compareReleases(version, since) >= 0;
