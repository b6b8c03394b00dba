import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * A full garbage collection, now. For long streaming loops over large records (an export of 100,000 samples): V8
 * otherwise lets its heap, and the Buffers only its collections free, grow with the run (bench/export). `--expose-gc`
 * set at run time makes `gc` reachable from a new context (Node's documented v8.setFlagsFromString caveat: it affects
 * what is created after it).
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
