import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { portOption } from './options.js';
import { printLine } from './output.js';

/** `roller view`: a run in the browser, served from its files (read-only), or written as a static site. */
export function registerViewCommand(program: Command): void {
  program
    .command('view')
    .description("a run in the browser: the samples table, each sample's agent tree, timeline, calls and relations, one call's request and response, ACTF and SFT side by side; served read-only from the run's files on loopback, or written as static files (--static) that open from disk")
    .argument('<dir>', 'a run directory (<output>/<run-name>), or one sample of it (samples/<model>/<index>_<task>): only that sample')
    .option('--port <n>', 'the port to serve on (default: any free one)', portOption)
    .option('--host <address>', 'the address to serve on; another than loopback shares the run with the network', '127.0.0.1')
    .option('--open', "open the page in the system's browser (xdg-open / open)")
    .option('--static <out>', 'write the view as static files into this new directory instead of serving (open out/index.html)')
    .action(async (dir: string, opts: { port?: number; host: string; open?: boolean; static?: string }) => {
      const { ViewData } = await import('../pipelines/view/view-data.js');
      const data = await ViewData.open(dir);
      if (opts.static) {
        const { exportStatic } = await import('../pipelines/view/static-export.js');
        const tty = process.stderr.isTTY;
        const report = await exportStatic(data, opts.static, (done, total) => {
          if (tty) process.stderr.write(`\rroller view: ${done}/${total} samples written`);
        });
        if (tty) process.stderr.write('\n');
        process.stderr.write(`roller view: ${report.files} files, ${(report.bytes / 1e6).toFixed(1)} MB in ${report.out}; open ${report.out}/index.html\n`);
        await printLine(`${report.out}/index.html`);
        return;
      }
      const { startViewServer } = await import('../pipelines/view/server.js');
      const view = await startViewServer(data, { host: opts.host, ...(opts.port ? { port: opts.port } : {}) });
      const landing = data.only === null ? view.url : `${view.url}#/sample/${data.only}`;
      process.stderr.write(`roller view: ${data.runDir} (${data.table.rows.length} samples) at ${landing} — read-only; Ctrl-C stops it\n`);
      if (view.url.includes('?token=')) process.stderr.write(`roller view: served beyond loopback (--host ${opts.host}): anyone with this URL (it holds the token) can read the run\n`);
      await printLine(landing);
      if (opts.open) spawn(process.platform === 'darwin' ? 'open' : 'xdg-open', [landing], { stdio: 'ignore', detached: true }).on('error', (err) => process.stderr.write(`roller view: could not open a browser (${err.message}); open ${landing}\n`)).unref();
      await new Promise<void>((resolve) => {
        const stop = () => void view.close().then(resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
