import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { DEEPSEEK_EVENTS_SCHEMA } from '../../schemas/harness-events.js';
import type { HarnessAdapter } from '../adapter.js';
import { deepSeekParticipants, deepSeekToActf, readDeepSeekRun } from './events.js';

/** DeepSeek (not installable here): one roller.deepseek-events/v1 runner log per run (a file, or every *.jsonl under a directory). */
export const deepSeekAdapter: HarnessAdapter = {
  name: 'deepseek',
  rawSchema: DEEPSEEK_EVENTS_SCHEMA,
  sessionFiles: /\.jsonl$/,

  async convert(native) {
    const files = native.endsWith('.jsonl')
      ? [native]
      : readdirSync(native, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.jsonl')).map((e) => join(e.parentPath, e.name)).sort();
    if (files.length === 0) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no roller.deepseek-events/v1 log under ${native}`);
    return files.map((file) => {
      const run = readDeepSeekRun(file);
      return { sessionId: run.sessionId, trace: run.events, actf: deepSeekToActf(run), participants: deepSeekParticipants(run), source: { log: file }, where: file };
    });
  },
};
