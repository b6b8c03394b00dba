/** A seeded generator of numbers in [0, 1) (mulberry32), so a failing random case can be run again by its seed. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n bytes from a seeded generator (one draw seeds a xorshift32 stream): random payloads a seed gives back. */
export function seededBytes(next: () => number, n: number): Buffer {
  let x = Math.floor(next() * 0xffffffff) >>> 0 || 1;
  const words = new Uint32Array(Math.ceil(n / 4));
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    words[i] = x;
  }
  return Buffer.from(words.buffer, 0, n);
}
