/**
 * When info.json is written during a run (seeds/003 §5.2): at the first result, after every 25 more, when results
 * come at least 30 s apart, and at once when the run is interrupted (`interrupted()`). Writes never overlap: a
 * forced one waits for the one that is out, then writes what is true then.
 */
export class RunInfoCheckpoints {
  private sinceWrite = 0;
  private lastResultAt = 0;
  private written = 0;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: () => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** A sample finished: writes when a checkpoint is due. */
  async result(): Promise<void> {
    const now = this.now();
    const due = this.written === 0 || ++this.sinceWrite >= 25 || now - this.lastResultAt >= 30_000;
    this.lastResultAt = now;
    if (due) await this.force();
  }

  /** The run was told to stop: the state it is in is written now, not only after running samples finish. */
  interrupted(): Promise<void> {
    return this.force();
  }

  /** Writes now (after any write that is out). */
  force(): Promise<void> {
    this.sinceWrite = 0;
    this.written++;
    this.writes = this.writes.then(() => this.write());
    return this.writes;
  }
}
