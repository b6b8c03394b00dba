import { z } from 'zod';
import { HarnessName, IsoTimestamp, NonNegativeInt } from './common.js';

export const LOCK_SCHEMA = 'roller.lock/v1';

/** Values under keys that look like credentials are written as this, never in clear. */
export { REDACTED } from '../core/redaction.js';

export const Lock = z
  .strictObject({
    schema: z.literal(LOCK_SCHEMA),
    roller_version: z.string(),
    created_at: IsoTimestamp,
    requests: z
      .array(z.strictObject({ index: NonNegativeInt, task_id: z.string().min(1), model: z.string().min(1) }))
      .describe('request order: resume refuses a different order'),
    task_bundle_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    harness: z.strictObject({ name: HarnessName, version: z.string() }),
    models: z.record(z.string(), z.unknown()).describe('model configuration with credentials redacted and URL userinfo removed'),
    image_id: z.string().nullable(),
    container: z
      .strictObject({
        user: z.string().regex(/^\d+:\d+$/),
        limits: z.strictObject({ memoryBytes: z.number().int().positive().nullable(), nanoCpus: z.number().int().positive().nullable(), pids: z.number().int().positive() }),
        network: z.enum(['host', 'proxy', 'none']),
        read_only_root: z.boolean().optional().describe("the image's filesystem read-only (HOME, work dir, /tmp writable); Harbor task images are not"),
        task_images: z.record(z.string(), z.string()).optional().describe("Harbor tasks' image ids by task id: a resume refuses a rebuilt image"),
        networked_builds: z.array(z.string()).optional().describe('Harbor tasks whose image was built on the host\'s network ([environment] build_network = "host"); the others had none'),
      })
      .optional()
      .describe('--runner docker: the user samples run as, their limits and network'),
    part: z
      .discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('shard'), index: NonNegativeInt, count: z.number().int().positive(), run_lock_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/) }),
        z.strictObject({ kind: z.literal('worker'), worker: z.string().min(1), run_lock_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/) }),
      ])
      .optional()
      .describe('a part of a run (--shard I/N, or a queue worker writing to its own --output): requests still lists the whole run; roller merge joins the parts'),
    harness_profile: z.string().optional().describe("a non-default harness profile (e.g. Pi's example sub-agent extension): a trajectory-semantic choice"),
    timeout_s: z.number().positive(),
    options: z.strictObject({
      thinking: z.string().nullable(),
      keep_thinking: z.boolean(),
      wire_trace: z.enum(['off', 'actf', 'full']),
      cache_trace: z.boolean(),
      capture_calls: z.boolean(),
      capture_debug: z.enum(['on-error', 'full', 'off']).optional().describe('what capture/ keeps of raw/ (absent in older locks: on-error)'),
      max_results_bytes: z.number().int().positive().optional().describe("--max-results-mb: one sample's results/ limit in bytes (absent: the default, 1 GiB)"),
    }),
  })
  .describe('run lock.json: what a resume must match before any harness starts');
export type Lock = z.infer<typeof Lock>;
