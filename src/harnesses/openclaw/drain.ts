import { readFile } from 'node:fs/promises';
import { ErrorCode } from '../../core/errors.js';
import type { CaptureFailure } from '../adapter.js';
import type { DrainReport } from './gateway-session.js';
import { OPENCLAW_DRAIN_FAILED_EXIT, openClawDrainReportFile } from './launch.js';

/** Sub-agent task states after which nothing more happens (as gateway-session.ts reads them). */
const ENDED = new Set(['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'blocked']);

/**
 * A Gateway run whose agent turn succeeded but whose sub-agents did not settle (exit 71, seeds/000 A9.11): a
 * capture error, the turn's status kept. Each child left open is `partial` when it ended but its completion was
 * not delivered, `running` when it had not ended, and `unknown` when the task registry never answered. null for
 * any other exit, or when the launcher wrote no report (then the exit is an ordinary failure).
 */
export async function openClawCaptureFailure(home: string, exitCode: number): Promise<CaptureFailure | null> {
  if (exitCode !== OPENCLAW_DRAIN_FAILED_EXIT) return null;
  let report: DrainReport;
  try {
    report = JSON.parse(await readFile(openClawDrainReportFile(home), 'utf8')) as DrainReport;
  } catch {
    return null;
  }
  if (report.settled) return null;
  return {
    code: ErrorCode.DRAIN_INCOMPLETE,
    message: `OpenClaw's agent turn succeeded, but ${report.message ?? 'its sub-agents did not settle'}: what they did after roller stopped the Gateway is not captured`,
    children:
      report.registry === 'unreadable'
        ? [{ native_id: null, native_status: null, delivery_status: null, recorded: 'unknown' }]
        : report.pending.map((p) => ({
            native_id: p.childSessionKey,
            native_status: p.status,
            delivery_status: p.deliveryStatus,
            recorded: p.status !== null && ENDED.has(p.status) ? 'partial' : 'running',
          })),
  };
}
