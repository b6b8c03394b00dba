/** Per-stage counts. Conservation: received = emitted + rejected + dropped. */
export type CounterName = 'received' | 'emitted' | 'rejected' | 'dropped';

export class Counters {
  private readonly byStage = new Map<string, Record<CounterName, number>>();

  add(stage: string, name: CounterName, n = 1): void {
    let row = this.byStage.get(stage);
    if (!row) {
      row = { received: 0, emitted: 0, rejected: 0, dropped: 0 };
      this.byStage.set(stage, row);
    }
    row[name] += n;
  }

  get(stage: string, name: CounterName): number {
    return this.byStage.get(stage)?.[name] ?? 0;
  }

  snapshot(): Record<string, Record<CounterName, number>> {
    const out: Record<string, Record<CounterName, number>> = {};
    for (const [stage, row] of this.byStage) out[stage] = { ...row };
    return out;
  }
}
