/**
 * OTLP chat spans' cost: a call of an API model priced from the maintained table (the model that answered, the
 * tokens it reported), a call of the embedded scripted model costs nothing and says so (as info.json does).
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { finishedSample } from '../../../src/pipelines/finished-sample.js';
import type { Call, SampleInfo } from '../../../src/schemas/index.js';
import { sampleTrace } from '../../../src/sinks/otlp/spans.js';
import { recordExamples } from '../../support/record-examples.js';

async function chatCost(model: string): Promise<Record<string, unknown>> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const call = { ...(recordExamples.call as Call), participant_id: null, response_model: 'claude-sonnet-4-5', usage: { reported: null, normalized: { input: 1000, cached_input: 0, cache_creation: 0, output: 100, reasoning: 0 } } };
  const info = { index: 0, task_id: 't', model, status: 'ok', harness: { name: 'claude-code', version: '1' }, runtime: { participants: [] } } as unknown as SampleInfo;
  const sample = { ...finishedSample('/nonexistent/run/samples/m/0000_t', info), calls: async function* () { yield call; }, relations: async () => [] };
  await sampleTrace(sample, provider.getTracer('test'), { content: false });
  await provider.forceFlush();
  const chat = exporter.getFinishedSpans().find((s) => s.attributes['gen_ai.operation.name'] === 'chat')!;
  return chat.attributes;
}

describe('OTLP chat span costs', () => {
  it('an API model: priced by the table', async () => {
    const a = await chatCost('anthropic/sonnet');
    expect(a['roller.cost_usd.priced']).toBeGreaterThan(0);
    expect(String(a['roller.cost_source'])).toMatch(/^priced\(genai-prices@/);
  });

  it('the embedded scripted model: nothing, said so', async () => {
    const a = await chatCost('scripted/default');
    expect([a['roller.cost_usd.priced'], a['roller.cost_source']]).toEqual([0, 'scripted']);
  });
});
