import { InvalidArgumentError, type Command } from 'commander';
import { printLine } from './output.js';

const FORMATS = ['table', 'csv', 'json'] as const;

/** `roller query RUN... "SQL"`: DuckDB over views defined on the runs' own files. */
export function registerQueryCommand(program: Command): void {
  program
    .command('query')
    .description('SQL (DuckDB) over one or more runs, read from their files as they are: views runs, samples, participants, calls (no request bodies), relations, steps (ACTF); docs/commands/query.md has their columns and examples')
    .argument('<runs-and-sql...>', 'run directories (<output>/<run-name>), then the SQL statement (quote it)')
    .option('--format <format>', 'table | csv | json (one JSON object per line)', (v: string) => {
      if (!(FORMATS as readonly string[]).includes(v)) throw new InvalidArgumentError(`one of ${FORMATS.join(', ')}`);
      return v;
    }, 'table')
    .action(async function (this: Command, args: string[], opts: { format: (typeof FORMATS)[number] }) {
      if (args.length < 2) this.error('error: name a run directory and then the SQL, e.g. roller query out/runs/demo "SELECT * FROM samples"', { exitCode: 2 });
      const { queryRuns } = await import('../pipelines/query/query.js');
      const rows = await queryRuns(args.slice(0, -1), args.at(-1)!, opts.format, printLine);
      if (opts.format !== 'table') process.stderr.write(`roller query: ${rows} row${rows === 1 ? '' : 's'}\n`);
    });
}
