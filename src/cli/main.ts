import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { isRollerError } from '../core/errors.js';
import { writeJsonSchemas } from '../pipelines/write-schemas.js';
import { validateFile } from '../pipelines/validate-files.js';
import { isRecordTypeName, recordTypes, type RecordTypeName } from '../schemas/registry.js';
import { PipeClosed, printLine } from './output.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

function recordTypeOption(value: string): RecordTypeName {
  if (!isRecordTypeName(value)) {
    throw new InvalidArgumentError(`unknown record type; one of: ${Object.keys(recordTypes).join(', ')}`);
  }
  return value;
}

export function buildProgram(): Command {
  const program = new Command('roller')
    .description('Record what coding-agent CLIs really did, and stream it into analysis and training data.')
    .version(pkg.version)
    .showHelpAfterError();

  program
    .command('schema')
    .description('write one JSON Schema file per record type roller writes')
    .requiredOption('--out <dir>', 'directory for the <type>.schema.json files')
    .action(async (opts: { out: string }) => {
      const written = await writeJsonSchemas(opts.out);
      for (const file of written) await printLine(file.path);
    });

  program
    .command('validate')
    .description('validate JSON or JSONL files against a record type; prints every error as file:line: $.path: message')
    .requiredOption('--schema <name>', `record type: ${Object.keys(recordTypes).join(', ')}`, recordTypeOption)
    .argument('<files...>', '.jsonl files are checked line by line, others as one JSON document')
    .action(async (files: string[], opts: { schema: RecordTypeName }) => {
      let issues = 0;
      let records = 0;
      const pending: string[] = [];
      for (const file of files) {
        const result = await validateFile(opts.schema, file, {
          onIssue: (i) => {
            pending.push(`${i.file}${i.line === null ? '' : `:${i.line}`}: ${i.path ?? ''}${i.path ? ': ' : ''}${i.message}`);
          },
        });
        issues += result.issues;
        records += result.records;
        for (const line of pending.splice(0)) await printLine(line);
        await printLine(result.issues === 0 ? `ok ${file} (${result.records} ${result.records === 1 ? 'record' : 'records'})` : `FAIL ${file} (${result.issues} ${result.issues === 1 ? 'error' : 'errors'})`);
        process.exitCode = issues > 0 ? 1 : 0;
      }
      process.stderr.write(`${files.length} files, ${records} records, ${issues} errors\n`);
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof PipeClosed) return; // the reader left; the exit code says what we found so far
    if (isRollerError(err)) {
      process.stderr.write(`roller: ${err.message} [${err.code}]\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
}
