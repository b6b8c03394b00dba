/** A command that fails says so in a line or two, never a crash trace: roller's refusals exit 2, anything else 70. */
import { describe, expect, it } from 'vitest';
import { reportFailure } from '../../src/cli/main.js';
import { ErrorCode, RollerError } from '../../src/core/errors.js';

function report(err: unknown, debug = false): { code: number; text: string } {
  let text = '';
  const code = reportFailure(err, (t) => (text += t), debug);
  return { code, text };
}

describe('reportFailure', () => {
  it("roller's own error: its message and stable code, exit 2", () => {
    const r = report(new RollerError(ErrorCode.INVALID_OPTIONS, '--tasks x.jsonl: no such file'));
    expect(r).toEqual({ code: 2, text: `roller: --tasks x.jsonl: no such file [${ErrorCode.INVALID_OPTIONS}]\n` });
  });

  it('anything else: what happened and what to do, no stack; exit 70', () => {
    const err = Object.assign(new Error("ENOTEMPTY: directory not empty, rmdir '/tmp/x'"), { code: 'ENOTEMPTY' });
    const r = report(err);
    expect(r.code).toBe(70);
    expect(r.text).toContain("roller: unexpected error: ENOTEMPTY: directory not empty, rmdir '/tmp/x'\n");
    expect(r.text).toContain('ROLLER_DEBUG=1');
    expect(r.text).not.toMatch(/\n\s+at /);
  });

  it('ROLLER_DEBUG=1: the stack too', () => {
    const r = report(new Error('boom'), true);
    expect(r.text).toMatch(/\n\s+at /);
    expect(report('a string thrown').text).toContain('unexpected error: a string thrown');
  });
});

describe('reportFailure: faults of the machine', () => {
  it('a full disk, a read-only filesystem (also as the cause of roller\'s own error): what it is, where, what to do; exit 74', () => {
    const full = report(Object.assign(new Error("ENOSPC: no space left on device, write '/runs/r/sft.jsonl'"), { code: 'ENOSPC', path: '/runs/r/sft.jsonl' }));
    expect(full).toEqual({ code: 74, text: expect.stringContaining('roller: the disk is full (ENOSPC at /runs/r/sft.jsonl)') });
    expect(full.text).toContain('Free space (or make it writable) and run the same command again');
    const wrapped = report(new RollerError(ErrorCode.ATOMIC_WRITE_FAILED, 'info.json could not be written', { cause: Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' }) }));
    expect(wrapped.code).toBe(74);
    expect(wrapped.text).toContain(`roller: the filesystem is read-only (EROFS): info.json could not be written [${ErrorCode.ATOMIC_WRITE_FAILED}]`);
    expect(wrapped.text).not.toMatch(/bug in roller|\n\s+at /);
  });
});

describe('reportFailure: a refusal of what the user chose stays a usage error', () => {
  it('--output not writable (EROFS as its cause): exit 2, as every refusal', () => {
    const r = report(new RollerError(ErrorCode.INVALID_OPTIONS, '--output /ro is not writable (EROFS); choose a location you can write to', { cause: Object.assign(new Error('EROFS'), { code: 'EROFS' }) }));
    expect(r).toEqual({ code: 2, text: `roller: --output /ro is not writable (EROFS); choose a location you can write to [${ErrorCode.INVALID_OPTIONS}]\n` });
  });
});
