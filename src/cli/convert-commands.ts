import { join } from 'node:path';
import type { Command } from 'commander';
import { ErrorCode, RollerError } from '../core/errors.js';
import { KNOWN_HARNESSES } from '../schemas/common.js';
import { positiveInt, reportSinkFailures, sinkSpecsOf, withSinkOptions } from './options.js';
import { printLine } from './output.js';

/** The commands over sessions and runs already on disk: `convert` (a native session), `export` (ATIF), `usage`. */
export function registerConvertCommands(program: Command): void {
  program
    .command('convert')
    .description('convert an existing native session into trace.jsonl, trace_ACTF.json, trace_SFT.json, usage.json')
    .requiredOption('--harness <name>', `${KNOWN_HARNESSES.join(' | ')} (or a registered adapter)`)
    .requiredOption('--native <path>', 'claude-code: a CLAUDE_CONFIG_DIR, a projects/<cwd> dir or a session file; codex: a CODEX_HOME or a rollout file')
    .requiredOption('--out <dir>', 'output directory (one subdirectory per session when there are several)')
    .option('--wire <file>', "calls.jsonl from roller's proxy: system prompt and tools from the captured requests")
    .option('--stream <file>', 'the CLI stream-json stdout: cross-checked against the native files (conversion.json)')
    .option('--no-keep-thinking', 'empty reasoning in SFT')
    .option('--allow-partial', 'exit 0 even when a sub-agent its parent names has no file, or a participant has records but no token count (listed as missing / tokens unknown either way)');
  withSinkOptions(program.commands.at(-1)!)
    .action(async (opts: { harness: string; native: string; out: string; wire?: string; stream?: string; keepThinking: boolean; allowPartial?: boolean; sink?: string[]; sinkOption?: string[]; sinkOptions?: string; sinkTimeout?: number }) => {
      const sessions = await (await import('../pipelines/convert.js')).convertNative({
        sinkSpecs: await sinkSpecsOf(opts),
        ...(opts.sinkTimeout ? { sinkTimeoutS: opts.sinkTimeout } : {}),
        harness: opts.harness,
        native: opts.native,
        out: opts.out,
        keepThinking: opts.keepThinking,
        ...(opts.wire ? { wire: opts.wire } : {}),
        ...(opts.stream ? { stream: opts.stream } : {}),
      });
      for (const s of sessions) {
        const people = s.participants.map((p) => `${p.role}:${p.native_id} ${p.tokens.input}/${p.tokens.cache_creation}/${p.tokens.cache_read}/${p.tokens.output}`).join(', ');
        const check = s.streamCheck === null ? '' : s.streamCheck.length === 0 ? '; stream agrees' : `; stream disagrees: ${s.streamCheck.join('; ')}`;
        await printLine(`${s.dir}: ${s.steps} steps, SFT ${s.sft.status}${s.sft.reason ? ` (${s.sft.reason})` : ''}; tokens in/cache-write/cache-read/out: ${people}${check}`);
        for (const r of s.rejects) process.stderr.write(`roller convert: ${r.origin.file}:${r.origin.line}: line not read (${r.reason}) [${r.code}]\n`);
        const lacking = opts.wire ? [] : withoutWire(s.actf);
        if (lacking.length > 0) process.stderr.write(`roller convert: note: ${s.dir}: ${lacking.join(' and ')} (the session files hold no more); pass --wire with the calls.jsonl roller proxy recorded of this session for what the model was offered\n`);
      }
      const missing = sessions.flatMap((s) => s.participants.filter((p) => p.status === 'missing'));
      for (const p of missing) process.stderr.write(`roller convert: warning: ${p.participant} is missing: ${p.reason}\n`);
      if (missing.length > 0 && !opts.allowPartial) {
        process.stderr.write(`roller convert: ${missing.length} participant(s) missing: the usage totals are partial; pass --allow-partial to accept that (exit 0)\n`);
        process.exitCode = 1;
      }
      const unknown = sessions.flatMap((s) => s.participants.filter((p) => p.status !== 'missing' && p.tokens_status === 'unknown'));
      for (const p of unknown) process.stderr.write(`roller convert: ${opts.allowPartial ? 'warning' : 'error'}: ${p.participant}: tokens unknown: ${p.tokens_note}\n`);
      if (unknown.length > 0 && !opts.allowPartial) {
        process.stderr.write(`roller convert: ${unknown.length} participant(s) with records but no token count [${ErrorCode.TOKENS_UNKNOWN}]: usage.json marks them tokens_status unknown; pass --allow-partial to accept that (exit 0)\n`);
        process.exitCode = 1;
      }
      reportSinkFailures('convert', sessions[0]?.sinkFailures);
    });

  program
    .command('export')
    .description(
      'export a run (nothing it holds is changed: the export is a new directory, <run>/<format> unless --output): --format atif (default) every sample with an ACTF as an ATIF-v1.7 trajectory.json (Harbor) under <run>/atif; ' +
        '--format hf a Hugging Face dataset directory (Parquet shards of the SFT records, a segments config, a dataset card) under <run>/hf; ' +
        "--format parquet the samples, participants, calls and relations tables (roller query's columns) under <run>/parquet; " +
        '--format rl one row per model call with token ids (prompt and completion ids, logprobs, loss mask, agent, reward, continuity) under <run>/rl; ' +
        '--format otlp one OpenTelemetry trace per sample (GenAI spans: invoke_agent per agent, chat per call, execute_tool per tool call) to --endpoint',
    )
    .argument('<dir>', 'a run directory (<output>/<run-name>)')
    .option('--format <format>', 'atif, hf, parquet, rl or otlp', 'atif')
    .option('--output <dir>', 'where it goes (default: <run>/<format>); hf and parquet refuse a directory that is not empty')
    .option('--max-shard-bytes <n>', "hf, parquet: a shard is closed before its rows' JSON passes this many bytes; rl: once the file passes them (default 67108864)", positiveInt)
    .option('--endpoint <url>', 'otlp: the collector base URL, /v1/traces appended (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT)')
    .option('--protocol <protocol>', 'otlp: http/protobuf or http/json (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)')
    .option('--content', "otlp: also send every call's messages (off by default)")
    .action(async (dir: string, opts: { format: string; output?: string; maxShardBytes?: number; endpoint?: string; protocol?: string; content?: boolean }) => {
      if (opts.format === 'otlp') {
        if (opts.output !== undefined || opts.maxShardBytes !== undefined) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--format otlp sends traces to --endpoint; --output and --max-shard-bytes are for files');
        if (opts.protocol !== undefined && opts.protocol !== 'http/protobuf' && opts.protocol !== 'http/json') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--protocol ${opts.protocol}: expected http/protobuf or http/json (grpc is not supported)`);
        const { exportRunData } = await import('../pipelines/export-data.js');
        const otlp = { ...(opts.endpoint ? { endpoint: opts.endpoint } : {}), ...(opts.protocol ? { protocol: opts.protocol as 'http/json' } : {}), content: opts.content === true };
        const r = await exportRunData(dir, 'otlp', '', { otlp });
        process.stderr.write(`${r.received} samples read, ${r.written} sent as traces${r.skipped ? `, ${r.skipped} without captured calls sent nothing (collect with --capture-calls)` : ''}\n`);
        return;
      }
      if (opts.endpoint !== undefined || opts.protocol !== undefined || opts.content) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--endpoint, --protocol and --content are for --format otlp');
      const output = opts.output ?? join(dir, opts.format);
      if (opts.format === 'hf' || opts.format === 'parquet' || opts.format === 'rl') {
        const { exportRunData } = await import('../pipelines/export-data.js');
        const r = await exportRunData(dir, opts.format, output, opts.maxShardBytes === undefined ? {} : { maxShardBytes: opts.maxShardBytes });
        process.stderr.write(`${r.received} samples read, ${r.written} ${opts.format === 'hf' ? 'gave training rows' : opts.format === 'rl' ? 'calls with token ids written' : 'written'}: ${output}\n`);
        return;
      }
      if (opts.format !== 'atif') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--format ${opts.format}: expected atif, hf, parquet, rl or otlp`);
      if (opts.maxShardBytes !== undefined) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--max-shard-bytes is for --format hf, parquet or rl');
      const r = await (await import('../pipelines/export-atif.js')).exportAtif(dir, output);
      for (const e of r.exported) await printLine(`exported ${e.path} (${e.status})`);
      for (const s of r.skipped) await printLine(`skipped ${s.path}: ${s.reason}`);
      for (const f of r.failed) process.stderr.write(`roller export: ${f.path}: not exported: ${f.error}\n`);
      process.stderr.write(`${r.exported.length} trajectories, ${r.skipped.length} skipped, ${r.failed.length} failed\n`);
      process.exitCode = r.failed.length > 0 ? 1 : 0;
    });

  program
    .command('usage')
    .description(
      "the agent tree of every sample of a run: each participant's own tokens, depth, spawning tool call, status and where it was read; totals without double counting. " +
        'With --harness claude-code: every participant (session or sub-agent file) of a CLAUDE_CONFIG_DIR, e.g. ~/.claude',
    )
    .argument('<dir>', 'a run directory (<output>/<run-name>); with --harness claude-code a CLAUDE_CONFIG_DIR or a directory below it')
    .option('--harness <name>', "claude-code: scan that harness's own session files under <dir> instead of a run")
    .option('--workers <n>', 'threads of the native scan (default: 2 where there are 2 cores)', positiveInt)
    .option('--json', 'the report as JSON')
    .option('--allow-partial', 'exit 0 even when a sub-agent its parent names has no file (it is listed as missing either way)')
    .action(async (dir: string, opts: { harness?: string; workers?: number; json?: boolean; allowPartial?: boolean }) => {
      if (opts.harness !== undefined) {
        if (opts.harness !== 'claude-code') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--harness ${opts.harness}: only claude-code has a native usage scan; for the others, roller convert --harness ${opts.harness} --native DIR --out OUT writes a usage.json per converted session under OUT (per participant and in total), or collect with roller and run roller usage on the run`);
        const { nativeUsage, formatNativeUsage } = await import('../pipelines/native-usage.js');
        const report = await nativeUsage(dir, opts.workers === undefined ? {} : { workers: opts.workers });
        if (opts.json) await printLine(JSON.stringify(report));
        else for (const chunk of formatNativeUsage(report)) await printLine(chunk);
        // A file that went away while listing (a live config dir) is routine; one that could not be read is not.
        const failed = report.unreadable.filter((u) => u.code !== 'ENOENT');
        if (failed.length > 0) {
          process.stderr.write(`roller usage: ${failed.length} path(s) could not be read and are not in the totals, e.g. ${failed[0]!.path} (${failed[0]!.code})\n`);
          process.exitCode = 1;
        }
        for (const p of report.participants.filter((x) => x.missing)) process.stderr.write(`roller usage: warning: ${p.participant} is named by ${p.missing!.referenced_by}, but ${p.file} is not there: its tokens are unknown\n`);
        if (report.partial && !opts.allowPartial) {
          process.stderr.write(`roller usage: the totals are partial (${report.partial.reason}); pass --allow-partial to accept that (exit 0)\n`);
          process.exitCode = 1;
        }
        return;
      }
      const report = await (await import('../pipelines/usage-report.js')).usageReport(dir);
      if (opts.json) await printLine(JSON.stringify(report));
      else for (const line of (await import('../pipelines/usage-report.js')).formatUsage(report)) await printLine(line);
    });
}

/** What an ACTF converted without captured calls lacks for training: the system prompt, the tools offered. */
function withoutWire(actf: { system_prompt_source: string; tools_source: string; tools: unknown[] | null }): string[] {
  const lacking: string[] = [];
  if (actf.system_prompt_source === 'none') lacking.push('no system prompt');
  if (actf.tools_source === 'native_derived') lacking.push(`only the ${actf.tools?.length ?? 0} tool(s) the session used, not every tool it was offered`);
  else if (actf.tools_source === 'none') lacking.push('no tool definitions');
  return lacking;
}
