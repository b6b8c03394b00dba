import type { z } from 'zod';
import type { JsonPath } from '../core/json-locate.js';

export interface SchemaIssue {
  path: JsonPath;
  message: string;
}

/** Validate one value at a boundary (safeParse: never throws); every issue, not just the first. */
export function checkValue(schema: z.ZodType, value: unknown): SchemaIssue[] {
  const result = schema.safeParse(value, { reportInput: false });
  if (result.success) return [];
  return flattenIssues(result.error.issues);
}

function flattenIssues(issues: readonly z.core.$ZodIssue[], prefix: JsonPath = []): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as (string | number)[])];
    // A union that failed on every branch: report the branch errors that got furthest, not "invalid input".
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const branches = issue.errors.map((errs) => flattenIssues(errs, path));
      const best = branches.reduce((a, b) => (depth(b) > depth(a) ? b : a));
      if (depth(best) > path.length) {
        out.push(...best);
        continue;
      }
    }
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...path, key], message: 'unexpected field (not part of the schema)' });
      continue;
    }
    out.push({ path, message: issue.message });
  }
  return out;
}

function depth(issues: SchemaIssue[]): number {
  return issues.reduce((d, i) => Math.max(d, i.path.length), 0);
}
