import type { Socket } from 'node:net';

/** Bytes written to a socket and not yet sent before its source is paused (resumed once they are sent). */
const HIGH_WATER_BYTES = 8 << 20;

export interface Pump {
  /** Starts reading `from`, first handing on `early` (what was read before the pump existed). */
  start(early: Buffer): void;
  /** Resolves once every chunk read so far was handed on. */
  flushed(): Promise<void>;
}

/**
 * Moves one direction of a relayed connection: each chunk `from` gives goes through `handle` (which may wait, e.g.
 * for the disk), in order, and what it returns is written to `to`. `from` is not read while a chunk is in `handle`
 * or while more than HIGH_WATER_BYTES wait in `to` for its peer: a peer that stops reading stops its sender.
 */
export function pump(from: Socket, to: Socket, handle: (chunk: Buffer) => Buffer[] | Promise<Buffer[]>): Pump {
  let chain: Promise<void> = Promise.resolve();
  const step = (chunk: Buffer) => {
    from.pause();
    chain = chain
      .then(async () => {
        const out = await handle(chunk);
        if (!to.writable) return;
        to.cork();
        for (const b of out) if (b.length > 0) to.write(b);
        to.uncork();
        if (to.writableLength > HIGH_WATER_BYTES) await sent(to);
        if (!from.destroyed) from.resume();
      })
      .catch(() => {
        // A bug in handling one chunk ends this connection, never the proxy.
        from.destroy();
        to.destroy();
      });
  };
  return {
    start(early) {
      if (early.length > 0) step(early);
      from.on('data', step);
      // Its end (the peer's FIN) is passed on once what came before it was, and this connection closes both ways
      // (node's http server keeps an upgraded socket half open otherwise).
      from.once('end', () =>
        void chain.then(() => {
          to.end();
          from.end();
        }),
      );
      if (early.length === 0) from.resume();
    },
    flushed: () => chain,
  };
}

/** Resolves when `socket` has sent what it holds (or closed). */
function sent(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}
