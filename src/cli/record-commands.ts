import { InvalidArgumentError, type Command } from 'commander';
import { isRecordTypeName, RECORD_TYPE_NAMES, type RecordTypeName } from '../schemas/record-type-names.js';
import { printLine } from './output.js';

function recordTypeOption(value: string): RecordTypeName {
  if (!isRecordTypeName(value)) throw new InvalidArgumentError(`unknown record type; one of: ${RECORD_TYPE_NAMES.join(', ')}`);
  return value;
}

/** The commands that check and show what roller wrote: `schema`, `validate`, `validate-capture`, `view-capture`, `validate-run`, `sinks`. */
export function registerRecordCommands(program: Command): void {
  program
    .command('sinks')
    .description('list the registered sinks: what each consumes, whether --sink takes it in a run, and its options (--sink-option NAME.key=value)')
    .option('--json', 'the list as JSON')
    .action(async (opts: { json?: boolean }) => {
      const listed = (await import('../pipelines/list-sinks.js')).listSinks();
      if (opts.json) return void (await printLine(JSON.stringify(listed)));
      for (const s of listed) {
        await printLine(`${s.name}  (${s.input}${s.runSink ? '; --sink takes it' : '; one file family of a sample'})${s.description ? `: ${s.description}` : ''}`);
        for (const o of s.options) await printLine(`    ${s.name}.${o.name}  ${o.type}${o.required ? ', required' : ''}${o.description ? `  ${o.description}` : ''}`);
      }
    });

  program
    .command('schema')
    .description('write one JSON Schema file per record type roller writes')
    .requiredOption('--out <dir>', 'directory for the <type>.schema.json files')
    .action(async (opts: { out: string }) => {
      const written = await (await import('../pipelines/write-schemas.js')).writeJsonSchemas(opts.out);
      for (const file of written) await printLine(file.path);
    });

  program
    .command('validate')
    .description('validate JSON or JSONL files against a record type; prints every error as file:line: $.path: message')
    .requiredOption('--schema <name>', `record type: ${RECORD_TYPE_NAMES.join(', ')}`, recordTypeOption)
    .argument('<files...>', '.jsonl files are checked line by line, others as one JSON document')
    .action(async (files: string[], opts: { schema: RecordTypeName }) => {
      let issues = 0;
      let records = 0;
      const pending: string[] = [];
      for (const file of files) {
        const result = await (await import('../pipelines/validate-files.js')).validateFile(opts.schema, file, {
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

  program
    .command('validate-capture')
    .description('check a capture attempt: published hashes, schemas, attribution and every relation reference')
    .argument('<dir>', 'a capture/attempt-NNNN directory (with manifest.json), or a sample or run directory: its published captures')
    .action(async (dir: string) => {
      let failed = false;
      for (const capture of await (await import('../pipelines/locate.js')).capturesOf(dir)) {
        const problems = await (await import('../pipelines/capture/validate.js')).validateCapture(capture.dir);
        for (const p of problems) await printLine(`${capture.dir}/${p}`);
        if (problems.length === 0) await printLine(`ok ${capture.dir}`);
        failed ||= problems.length > 0;
      }
      process.exitCode = failed ? 1 : 0;
    });

  program
    .command('view-capture')
    .description('the call tree of a capture attempt, expanded by agent, read from its files (nothing is written)')
    .argument('<dir>', 'a capture/attempt-NNNN directory, or a sample or run directory: its published captures, one after another')
    .action(async (dir: string) => {
      const captures = await (await import('../pipelines/locate.js')).capturesOf(dir);
      for (const capture of captures) {
        if (capture.sample) await printLine(`== ${capture.sample} (${capture.dir})`);
        for (const line of await (await import('../transforms/capture/view.js')).viewCapture(capture.dir)) await printLine(line);
      }
    });

  program
    .command('validate-run')
    .description('check a collect run: info.json, lock.json, sft.jsonl, every sample (info, ACTF, SFT) and every published capture')
    .argument('<dir>', 'a run directory (<output>/<run-name>)')
    .action(async (dir: string) => {
      const problems = await (await import('../pipelines/validate-run.js')).validateRun(dir);
      for (const p of problems) await printLine(p);
      process.stderr.write(problems.length === 0 ? `ok ${dir}\n` : `${problems.length} problems in ${dir}\n`);
      process.exitCode = problems.length === 0 ? 0 : 1;
    });
}
