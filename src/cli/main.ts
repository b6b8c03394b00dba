import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { ErrorCode, isRollerError, RollerError } from '../core/errors.js';
import { defaultCacheDir, PINNED_HARNESSES } from '../harnesses/pins.js';
import { KNOWN_HARNESSES } from '../schemas/common.js';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isRecordTypeName, RECORD_TYPE_NAMES, type RecordTypeName } from '../schemas/record-type-names.js';
import { PipeClosed, printLine } from './output.js';
import { registerHarnessCommands } from './harness-commands.js';
import { captureDebugOption, nonNegativeInt, openclawModeOption, portOption, positiveInt, reportSinkFailures, sinkSpecsOf, wireTraceOption, withSinkOptions } from './options.js';
import { REPROCESS_TARGETS, type ReprocessTarget } from '../pipelines/reprocess/targets.js';
import type { WireTraceMode } from '../sinks/wire-trace/sink.js';
import type { OpenClawMode } from '../harnesses/openclaw/launch.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

function recordTypeOption(value: string): RecordTypeName {
  if (!isRecordTypeName(value)) {
    throw new InvalidArgumentError(`unknown record type; one of: ${RECORD_TYPE_NAMES.join(', ')}`);
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
    .command('proxy')
    .description('run a recording reverse proxy in front of a model API; writes DIR/calls.jsonl and DIR/raw/ until Ctrl-C or SIGTERM')
    .requiredOption('--upstream <url>', 'base URL of the model API (a path prefix is kept)')
    .requiredOption('--out <dir>', 'capture directory')
    .option('--port <n>', 'port to listen on (0 picks a free one)', portOption, 0)
    .option('--host <addr>', 'address to bind', '127.0.0.1')
    .option('--wire-trace <mode>', 'off | actf | full (seeds/003 §5.5)', wireTraceOption, 'off')
    .option('--no-websocket', 'refuse WebSocket upgrades at once (clients fall back to HTTP) instead of relaying them')
    .action(async (opts: { upstream: string; out: string; port: number; host: string; wireTrace: WireTraceMode; websocket: boolean }) => {
      const { proxy, done } = await (await import('../pipelines/proxy.js')).startProxyPipeline({
        upstream: opts.upstream,
        outDir: opts.out,
        port: opts.port,
        host: opts.host,
        wireTrace: opts.wireTrace,
        websocket: opts.websocket,
      });
      const stop = () => void proxy.close();
      done.catch((err: Error) => void (proxy.failure ? undefined : process.stderr.write(`roller proxy: still forwarding and recording the wire log, but ${err.message}\n`)));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      const { printableUpstream } = await import('../sources/proxy/request-target.js');
      process.stderr.write(`roller proxy: ${proxy.url} -> ${printableUpstream(opts.upstream)}, recording to ${opts.out} (Ctrl-C to stop)\n`);
      await printLine(proxy.url);
      try {
        const report = await done;
        const calls = report.sinks[0]?.written ?? 0;
        process.stderr.write(`roller proxy: closed; ${calls} calls recorded in ${opts.out}\n`);
      } catch (err) {
        // The wire log failed (said at once when it did): what was recorded before is in place; the exit code says so.
        process.stderr.write(`roller proxy: closed; the capture in ${opts.out} is incomplete: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });

  program
    .command('project-wire')
    .description("project a `roller proxy` capture's raw/wire.frames into its calls.jsonl (and traces) again, after its projection stopped or a decoder changed; the proxy must be stopped")
    .argument('<dir>', 'the --out directory of `roller proxy`')
    .option('--wire-trace <mode>', 'off | actf | full (seeds/003 §5.5)', wireTraceOption, 'off')
    .action(async (dir: string, opts: { wireTrace: WireTraceMode }) => {
      const { projectWireLog, wireLogOf } = await import('../pipelines/proxy-projection.js');
      try {
        await access(wireLogOf(dir));
      } catch {
        throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${wireLogOf(dir)} not found: project-wire reads the wire log of a \`roller proxy --out ${dir}\` capture`);
      }
      const report = await projectWireLog({ outDir: dir, wireTrace: opts.wireTrace });
      process.stderr.write(`roller project-wire: ${report.sinks[0]?.written ?? 0} calls projected into ${join(dir, 'calls.jsonl')}\n`);
    });

  program
    .command('scripted-model')
    .description('run the scripted model server (Anthropic Messages, Chat Completions, Responses) until Ctrl-C')
    .option('--script <file>', 'script file (JSON); default: the embedded script')
    .option('--port <n>', 'port (0 picks a free one)', portOption, 0)
    .option('--host <addr>', 'address to bind', '127.0.0.1')
    .action(async (opts: { script?: string; port: number; host: string }) => {
      const script = opts.script ? await (await import('../sources/scripted-model/script.js')).loadScript(opts.script) : undefined;
      const server = await (await import('../sources/scripted-model/server.js')).startScriptedModel({ ...(script ? { script } : {}), port: opts.port, host: opts.host });
      await printLine(server.url);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
      process.stderr.write(`roller scripted-model: closed after ${server.answered} model requests\n`);
    });

  program
    .command('validate-capture')
    .description('check a capture attempt: published hashes, schemas, attribution and every relation reference')
    .argument('<dir>', 'a capture/attempt-NNNN directory (with manifest.json)')
    .action(async (dir: string) => {
      const problems = await (await import('../transforms/capture/validate.js')).validateCapture(dir);
      for (const p of problems) await printLine(`${dir}/${p}`);
      if (problems.length === 0) await printLine(`ok ${dir}`);
      process.exitCode = problems.length === 0 ? 0 : 1;
    });

  program
    .command('view-capture')
    .description('the call tree of a capture attempt, expanded by agent, read from its files (nothing is written)')
    .argument('<dir>', 'a capture/attempt-NNNN directory')
    .action(async (dir: string) => {
      for (const line of await (await import('../transforms/capture/view.js')).viewCapture(dir)) await printLine(line);
    });

  registerHarnessCommands(program);

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
    .action(async (opts: { harness: string; native: string; out: string; wire?: string; stream?: string; keepThinking: boolean; allowPartial?: boolean; sink?: string[]; sinkOption?: string[]; sinkOptions?: string }) => {
      const sessions = await (await import('../pipelines/convert.js')).convertNative({
        sinkSpecs: await sinkSpecsOf(opts),
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
    .description('export every sample with an ACTF as an ATIF-v1.7 trajectory.json (Harbor) under <run>/atif or --output; the run is not modified')
    .argument('<dir>', 'a run directory (<output>/<run-name>)')
    .option('--output <dir>', 'where the trajectories go (default: <run>/atif)')
    .action(async (dir: string, opts: { output?: string }) => {
      const r = await (await import('../pipelines/export-atif.js')).exportAtif(dir, opts.output ?? join(dir, 'atif'));
      for (const e of r.exported) await printLine(`exported ${e.path} (${e.status})`);
      for (const s of r.skipped) await printLine(`skipped ${s.path}: ${s.reason}`);
      for (const f of r.failed) process.stderr.write(`roller export: ${f.path}: not exported: ${f.error}\n`);
      process.stderr.write(`${r.exported.length} trajectories, ${r.skipped.length} skipped, ${r.failed.length} failed\n`);
      process.exitCode = r.failed.length > 0 ? 1 : 0;
    });

  program
    .command('reprocess')
    .description('project a run (or one sample) again from its archive — calls.jsonl and raw/ (native files, wire log) — by the stages collect uses, into a new run tree; the input is never modified')
    .argument('<dir>', 'a run directory, or one sample directory of a run')
    .requiredOption('--output <dir>', 'the new run tree (a sample already there from the same source is left alone)')
    .option('--concurrency <n>', 'samples at once, each in its own worker thread', positiveInt, 1)
    .option('--only <targets>', `re-project only these output families (${REPROCESS_TARGETS.join(',')}); the others are copied from the archive`)
    .option('--from-wire', "decode the calls again from each capture's raw/wire.frames with the proxy's decoders (after a decoder changed), instead of taking calls.jsonl")
    .option('--no-verify', "use each sample's archive without checking its published capture (hashes, attribution, references) first; recorded in reprocess.jsonl")
    .option('--json', 'print the report as JSON on stdout');
  withSinkOptions(program.commands.at(-1)!)
    .action(async (dir: string, opts: { output: string; concurrency: number; only?: string; fromWire?: boolean; verify: boolean; json?: boolean; sink?: string[]; sinkOption?: string[]; sinkOptions?: string }) => {
      const only = opts.only ? opts.only.split(',').map((t) => t.trim()) : null;
      const unknown = only?.filter((t) => !(REPROCESS_TARGETS as readonly string[]).includes(t)) ?? [];
      if (unknown.length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--only ${opts.only}: unknown ${unknown.join(', ')} (choose from ${REPROCESS_TARGETS.join(', ')})`);
      const progress = new (await import('./collect-progress.js')).ReprocessProgress();
      const report = await (await import('../pipelines/reprocess/run.js')).reprocess({ input: dir, output: opts.output, concurrency: opts.concurrency, only: only as ReprocessTarget[] | null, ...(opts.fromWire ? { fromWire: true } : {}), ...(opts.verify ? {} : { noVerify: true }), sinkSpecs: await sinkSpecsOf(opts), rollerVersion: pkg.version, onSample: (row, p) => progress.sample(row, p) });
      progress.stop();
      if (opts.json) await printLine(JSON.stringify(report));
      else await printLine(report.output);
      process.stderr.write(
        `roller reprocess: ${report.written} written, ${report.unchanged} unchanged (already reprocessed from the same source), ${report.errors} errors${report.wroteRunFiles ? '' : '; nothing new was written'}\n`,
      );
      process.exitCode = report.errors > 0 ? 1 : 0;
      reportSinkFailures('reprocess', report.sinkFailures);
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
        if (opts.harness !== 'claude-code') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--harness ${opts.harness}: only claude-code has a native usage scan (for the others: roller convert, then roller usage on its output)`);
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

  program
    .command('collect')
    .description('run every task x model through a harness on the embedded scripted model (or an API), recording every call; writes a run directory (seeds/003)')
    .requiredOption('--tasks <file>', 'tasks JSONL: one {"id","prompt", "followups"?, "files"?, "output_dirs"?, "timeout_s"?} per line (followups: later prompts in the same session; claude-code)')
    .option('--harness <name>', `${Object.keys(PINNED_HARNESSES).join(' | ')} (the harnesses roller can run)`, 'claude-code')
    .option('--model <provider/model>', 'repeatable; scripted/<name> starts the embedded scripted model', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--model-config <file>', 'JSON {"models": {"provider/model": {"api_base", "api_key_env"}}}; keys only from the environment')
    .option('--output <dir>', 'parent directory of runs', 'runs')
    .option('--run-name <name>', 'the run directory under --output (default: harness and time)')
    .option('--concurrency <n>', 'samples at once', positiveInt, 1)
    .option('--retries <n>', 'extra complete attempts of a failed sample', nonNegativeInt, 0)
    .option('--resume', 'continue the run in --run-name: reuse finished samples, run the rest (the lock must match)')
    .option('--timeout <s>', 'per-sample timeout in seconds, all its prompts together (a task timeout_s wins)', positiveInt, 600)
    .option('--wire-trace <mode>', 'off | actf | full (seeds/003 §5.5)', wireTraceOption, 'actf')
    .option('--no-keep-thinking', 'empty reasoning in SFT')
    .option('--thinking <level>', 'reasoning level for the harness (claude-code --effort: low..max; codex model_reasoning_effort: minimal..xhigh), audited on the wire')
    .option('--capture-calls', 'record every model call and publish capture/ (calls, relations, manifest) per sample; needs the wire trace (seeds/000: off by default)')
    .option('--claude-capture-calls', 'alias of --capture-calls')
    .option('--no-capture-calls', 'the default: no capture/ (kept for scripts that say so)')
    .option('--cache-trace', "OpenClaw's own cache trace (on by default for OpenClaw; kept in the sample, redacted, with --wire-trace full; an error for other harnesses)")
    .option('--no-cache-trace', "OpenClaw: do not ask for its cache trace")
    .option('--pi-subagent-extension', "Pi: enable the example sub-agent extension Pi ships (roller's profile has none)")
    .option('--openclaw-mode <mode>', 'OpenClaw: gateway (default; a local Gateway, sessions_spawn children run) | exec (one embedded turn, no children)', openclawModeOption)
    .option('--key-in-harness', "with --wire-trace off (no proxy): give a model's key to the harness itself, where every tool the agent runs can read it (refused without this)")
    .option('--max-results-mb <n>', "one sample's results/ at most this many MiB in all (default 1024); a file past it is refused and named", (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a whole number of MiB above 0');
      return n;
    })
    .option('--collect-path <path>', 'repeatable; a work-dir path also copied to results/legacy/', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--capture-debug <mode>', 'on-error | full | off: when capture/ keeps raw/', captureDebugOption, 'on-error')
    .option('--runner <kind>', 'local (default) | docker', 'local')
    .option('--image <name>', '--runner docker: the image samples run in (host networking; the pinned CLI is mounted)')
    .option('--cache-dir <dir>', 'where pinned harness CLIs are installed', defaultCacheDir())
    .option('--harness-version <version>', 'run this released version of the harness CLI instead of the pinned one (roller harness versions NAME lists the verified ones); the lock records it')
    .option('--allow-unverified-version', 'run a --harness-version that is not in the version matrix')
    .option('--json', 'print the final run info as JSON on stdout');
  withSinkOptions(program.commands.at(-1)!)
    .action(async (opts: { sink?: string[]; sinkOption?: string[]; sinkOptions?: string; tasks: string; harness: string; model?: string[]; modelConfig?: string; output: string; runName?: string; concurrency: number; retries: number; resume?: boolean; timeout: number; wireTrace: WireTraceMode; keepThinking: boolean; thinking?: string; captureCalls?: boolean; claudeCaptureCalls?: boolean; captureDebug: 'on-error' | 'full' | 'off'; runner: string; image?: string; cacheDir: string; json?: boolean; cacheTrace?: boolean; collectPath?: string[]; maxResultsMb?: number; keyInHarness?: boolean; piSubagentExtension?: boolean; openclawMode?: OpenClawMode; harnessVersion?: string; allowUnverifiedVersion?: boolean }) => {
      if (opts.runner !== 'local' && opts.runner !== 'docker') throw new InvalidArgumentError('--runner: local or docker');
      const controller = new AbortController();
      const onSignal = () => {
        if (controller.signal.aborted) process.exit(130); // a second Ctrl-C: leave now (info.json holds the last checkpoint)
        process.stderr.write('roller collect: interrupted; queued samples are cancelled, running ones finish (Ctrl-C again to leave at once)\n');
        controller.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const progress = new (await import('./collect-progress.js')).CollectProgress();
      let total = 0;
      const { runDir, info } = await (await import('../pipelines/collect/run.js')).collect({
        onPlan: (n) => (total = n),
        tasks: opts.tasks,
        harness: opts.harness,
        models: opts.model ?? ['scripted/default'],
        ...(opts.modelConfig ? { modelConfig: opts.modelConfig } : {}),
        output: opts.output,
        ...(opts.runName ? { runName: opts.runName } : {}),
        concurrency: opts.concurrency,
        retries: opts.retries,
        resume: opts.resume ?? false,
        timeoutS: opts.timeout,
        wireTrace: opts.wireTrace,
        keepThinking: opts.keepThinking,
        thinking: opts.thinking ?? null,
        captureCalls: opts.captureCalls === true || opts.claudeCaptureCalls === true,
        captureDebug: opts.captureDebug,
        ...(opts.cacheTrace !== undefined ? { cacheTrace: opts.cacheTrace } : {}),
        ...(opts.piSubagentExtension ? { piSubagentExtension: true } : {}),
        ...(opts.openclawMode ? { openclawMode: opts.openclawMode } : {}),
        ...(opts.collectPath ? { collectPaths: opts.collectPath } : {}),
        ...(opts.keyInHarness ? { keyInHarness: true } : {}),
        ...(opts.maxResultsMb ? { maxResultsBytes: opts.maxResultsMb * (1 << 20) } : {}),
        runner: opts.runner,
        ...(opts.image ? { image: opts.image } : {}),
        cacheDir: opts.cacheDir,
        ...(opts.harnessVersion ? { harnessVersion: opts.harnessVersion } : {}),
        ...(opts.allowUnverifiedVersion ? { allowUnverifiedVersion: true } : {}),
        sinkSpecs: await sinkSpecsOf(opts),
        signal: controller.signal,
        rollerVersion: pkg.version,
        onStart: (r) => progress.started(r, total),
        onSample: (s, p) => progress.finished(s, p),
        onNotice: (message) => process.stderr.write(`roller collect: ${message}\n`),
        onNotReused: (dir, why) => process.stderr.write(`roller collect --resume: ${dir} is collected again, its capture fails validation: ${why}\n`),
      });
      progress.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const sft = (await readFile(join(runDir, 'sft.jsonl'), 'utf8')).split('\n').filter(Boolean).length;
      const { ok, error, timeout, skipped } = info.summary;
      const segmented = info.summary.sft_segmented ?? 0;
      process.stderr.write(
        `roller collect: ${info.state}: ${ok} ok, ${skipped} reused, ${error} error, ${timeout} timeout; sft.jsonl holds ${sft} of ${info.progress.total} samples (${info.progress.total - sft - segmented} excluded: failed, not run, or no eligible SFT${segmented > 0 ? `; ${segmented} compacted, their segments in sft_segments.jsonl` : ''})\n`,
      );
      // The same tally as info.json summary.training: one exclusion policy for the files and this report.
      const t = info.summary.training;
      const [incomplete, modelNameMismatch, effortMismatch, effortUnverified, thinkingMismatch] = t ? [t.incomplete, t.model_name_mismatch, t.wire_effort_mismatch, t.wire_effort_unverified, t.thinking_mismatch] : [0, 0, 0, 0, 0];
      if (thinkingMismatch > 0) process.stderr.write(`roller collect: ${thinkingMismatch} samples hold visible reasoning though --thinking off asked for none: excluded from sft.jsonl (runtime.thinking_audit, thinking_effort_mismatch)\n`);
      if (effortMismatch > 0) process.stderr.write(`roller collect: ${effortMismatch} samples sent another reasoning effort than --thinking asked: excluded from sft.jsonl (runtime.wire_effort_audit)\n`);
      if (effortUnverified > 0) process.stderr.write(`roller collect: ${effortUnverified} samples' requests did not state the reasoning effort (unverified, not excluded)\n`);
      if (incomplete > 0) process.stderr.write(`roller collect: ${incomplete} samples end incomplete (token limit or empty answer): excluded from sft.jsonl (info.json runtime.completion_audit)\n`);
      if (modelNameMismatch > 0) process.stderr.write(`roller collect: ${modelNameMismatch} samples were answered by a model of another name than requested (a warning: aliases are legitimate; runtime.model_identity_audit)\n`);
      const g = info.summary.grades;
      if (g) process.stderr.write(`roller collect: graded ${g.graded}: ${g.passed} passed, ${g.failed} failed${g.timeout + g.error > 0 ? `, ${g.timeout} timed out, ${g.error} could not be graded (info.json grade.reason)` : ''} (a verdict on the work; it changes no sample status and no SFT inclusion)\n`);
      if (opts.json) await printLine(JSON.stringify(info));
      else await printLine(runDir);
      process.exitCode = info.state === 'finished' && info.summary.failed === 0 ? 0 : 1;
      for (const e of info.errors) process.stderr.write(`roller collect: ${e.message}\n`);
      if (info.errors.length > 0) process.exitCode = 1;
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  // Everything roller writes is its user's alone (captures hold prompts, code and tool output): 0600 files, 0700 dirs.
  process.umask(0o077);
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
