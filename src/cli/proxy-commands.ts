import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ErrorCode, RollerError } from '../core/errors.js';
import type { WireTraceMode } from '../sinks/wire-trace/sink.js';
import { portOption, positiveInt, wireTraceOption } from './options.js';
import { printLine } from './output.js';

/** The recording proxy by hand (`proxy`, `project-wire`) and the scripted model it can stand in front of. */
export function registerProxyCommands(program: Command): void {
  program
    .command('proxy')
    .description('run a recording reverse proxy in front of a model API; writes DIR/calls.jsonl and DIR/raw/ until Ctrl-C or SIGTERM')
    .requiredOption('--upstream <url>', 'base URL of the model API (a path prefix is kept)')
    .requiredOption('--out <dir>', 'capture directory')
    .option('--port <n>', 'port to listen on (0 picks a free one)', portOption, 0)
    .option('--host <addr>', 'address to bind', '127.0.0.1')
    .option('--wire-trace <mode>', 'off | actf | full (seeds/003 §5.5)', wireTraceOption, 'off')
    .option('--no-websocket', 'refuse WebSocket upgrades at once (clients fall back to HTTP) instead of relaying them')
    .option('--log', 'one line on stderr per request as it ends: its number, method, path (no query), protocol, status, time')
    .action(async (opts: { upstream: string; out: string; port: number; host: string; wireTrace: WireTraceMode; websocket: boolean; log?: boolean }) => {
      const { proxy, done } = await (await import('../pipelines/proxy.js')).startProxyPipeline({
        upstream: opts.upstream,
        outDir: opts.out,
        port: opts.port,
        host: opts.host,
        wireTrace: opts.wireTrace,
        websocket: opts.websocket,
        ...(opts.log
          ? { onExchange: (e: { seq: number; method: string; path: string; protocol: string; status: number | null; ms: number; error: string | null }) => process.stderr.write(`roller proxy: #${e.seq} ${e.method} ${e.path} ${e.protocol} ${e.status ?? '-'} ${e.ms} ms${e.error ? ` (${e.error})` : ''}\n`) }
          : {}),
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
    .option('--require-key-env <name>', "serve as a provider's API: every request must carry the key in this environment variable (x-api-key or Bearer), else 401")
    .option('--models <ids>', 'the model names it serves, comma-separated (another is a 404, as a provider answers); default: any')
    .option('--max-requests <n>', "requests answered before it refuses with 429 (the script's runaway guard; default: the script's max_requests)", positiveInt)
    .action(async (opts: { script?: string; port: number; host: string; requireKeyEnv?: string; models?: string; maxRequests?: number }) => {
      const loaded = opts.script ? await (await import('../sources/scripted-model/script.js')).loadScript(opts.script) : undefined;
      const base = loaded ?? (opts.maxRequests ? (await import('../sources/scripted-model/default-script.js')).DEFAULT_SCRIPT : undefined);
      const script = base && opts.maxRequests ? { ...base, max_requests: opts.maxRequests } : base;
      const requireKey = opts.requireKeyEnv === undefined ? undefined : process.env[opts.requireKeyEnv];
      if (opts.requireKeyEnv !== undefined && !requireKey) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--require-key-env ${opts.requireKeyEnv}: that environment variable is not set`);
      const models = opts.models?.split(',').map((m) => m.trim()).filter(Boolean);
      const server = await (await import('../sources/scripted-model/server.js')).startScriptedModel({ ...(script ? { script } : {}), port: opts.port, host: opts.host, ...(requireKey ? { requireKey } : {}), ...(models?.length ? { models } : {}) });
      await printLine(server.url);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
      process.stderr.write(`roller scripted-model: closed after ${server.answered} model requests\n`);
    });
}
