import { ErrorCode, RollerError } from './errors.js';

/** A size as Docker and Harbor write it (`512m`, `2G`, `1.5g`, `2GiB`, or bytes), in bytes; `what` names it in the error. */
export function parseSize(text: string, what: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(text.trim());
  if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${text}: a size such as 512m or 2g`);
  const scale = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.round(Number(m[1]) * scale);
}
