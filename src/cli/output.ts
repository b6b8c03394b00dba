/**
 * stdout for data, with broken pipes handled: when the reader goes away (`roller validate | head -1`)
 * we stop quietly instead of dying on EPIPE.
 */
export class PipeClosed extends Error {
  constructor() {
    super('stdout closed by the reader');
  }
}

let closed = false;
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') {
    closed = true;
    return;
  }
  throw err;
});

export function stdoutClosed(): boolean {
  return closed;
}

/** Write a line; waits for drain so a slow reader slows us down; throws PipeClosed once the reader left. */
export async function printLine(line: string): Promise<void> {
  if (closed) throw new PipeClosed();
  if (!process.stdout.write(`${line}\n`)) {
    await new Promise<void>((resolve) => {
      const done = () => {
        process.stdout.off('drain', done);
        process.stdout.off('error', done);
        resolve();
      };
      process.stdout.on('drain', done);
      process.stdout.on('error', done);
    });
  }
  if (closed) throw new PipeClosed();
}
