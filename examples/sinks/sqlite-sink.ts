/**
 * A sink of your own: every attributed call and every participant of a run into SQLite (better-sqlite3).
 *
 *   npm run build
 *   npx roller collect --tasks examples/tasks/demo.jsonl --capture-calls --sink ./dist/examples/sinks/sqlite-sink.js \
 *     --sink-option sqlite-sink.path=runs.db
 *
 * It exports a SinkModule (roller loads it by path, checks its options with its zod schema, and feeds it the run's
 * two streams: attributed calls, and finished samples in request order), each built with sinkFrom. Two runs may write
 * one database at once (a collect and a reprocess): WAL and a busy timeout allow that.
 */
import Database from 'better-sqlite3';
import { defineSink, sinkFrom, z, type Call, type FinishedSample } from '../../src/index.js';

const Options = z.strictObject({ path: z.string().min(1).describe('the SQLite database file (created if absent)') });

export default defineSink({
  name: 'sqlite-sink',
  options: Options,
  create({ path }: z.infer<typeof Options>) {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 10000');
    db.exec(`
      CREATE TABLE IF NOT EXISTS calls (
        call_id TEXT PRIMARY KEY, participant_id TEXT, protocol TEXT, request_model TEXT, response_model TEXT,
        http_status INTEGER, execution_status TEXT, export_status TEXT, input INTEGER, output INTEGER);
      CREATE TABLE IF NOT EXISTS participants (
        sample TEXT, participant TEXT, role TEXT, parent TEXT, depth INTEGER, spawn_tool_call_id TEXT,
        input INTEGER, cache_read INTEGER, output INTEGER, status TEXT, PRIMARY KEY (sample, participant));
      CREATE TABLE IF NOT EXISTS samples (sample TEXT PRIMARY KEY, task_id TEXT, model TEXT, status TEXT, steps INTEGER);`);
    // The database closes when both streams have ended (however they end: sinkFrom runs close either way).
    let open = 2;
    const close = () => void (--open === 0 && db.close());
    const callRow = db.prepare(
      `INSERT OR REPLACE INTO calls VALUES (@call_id, @participant_id, @protocol, @request_model, @response_model, @http_status, @execution_status, @export_status, @input, @output)`,
    );
    const calls = sinkFrom<Call>(
      'sqlite-sink:calls',
      async (input) => {
        for await (const c of input) {
          const u = c.usage.normalized;
          callRow.run({ call_id: c.call_id, participant_id: c.participant_id, protocol: c.protocol, request_model: c.request_model, response_model: c.response_model, http_status: c.http_status, execution_status: c.execution_status, export_status: c.export_status, input: u?.input ?? null, output: u?.output ?? null });
        }
      },
      { close },
    );
    const participantRow = db.prepare(`INSERT OR REPLACE INTO participants VALUES (@sample, @participant, @role, @parent, @depth, @spawn, @input, @cache_read, @output, @status)`);
    const sampleRow = db.prepare(`INSERT OR REPLACE INTO samples VALUES (@sample, @task_id, @model, @status, @steps)`);
    const samples = sinkFrom<FinishedSample>(
      'sqlite-sink:samples',
      async (input) => {
        for await (const s of input) {
          const sample = `${s.info.index}_${s.info.task_id} (${s.info.model})`;
          const actf = await s.actf();
          sampleRow.run({ sample, task_id: s.info.task_id, model: s.info.model, status: s.info.status, steps: actf?.steps.length ?? null });
          for (const p of s.info.runtime.participants ?? []) {
            participantRow.run({ sample, participant: p.participant, role: p.role, parent: p.parent, depth: p.depth, spawn: p.spawn_tool_call_id, input: p.tokens.input ?? 0, cache_read: p.tokens.cache_read ?? 0, output: p.tokens.output ?? 0, status: p.status });
          }
        }
      },
      { close },
    );
    return { calls, samples };
  },
});
