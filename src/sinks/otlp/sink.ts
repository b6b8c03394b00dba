import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { z } from 'zod';
import { abortableInput, abortPromise } from '../../core/abort.js';
import type { Sink, SinkReport, StageContext } from '../../core/stage.js';
import { rollerVersion } from '../../core/version.js';
import type { FinishedSample } from '../../schemas/finished-sample.js';
import { otlpExporter, otlpTarget, sendSpans } from './exporter.js';
import { sampleTrace } from './spans.js';

export const OtlpOptions = z
  .strictObject({
    endpoint: z.string().min(1).optional().describe('the collector base URL (/v1/traces is appended); default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT'),
    protocol: z.enum(['http/protobuf', 'http/json']).optional().describe('default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL or http/protobuf'),
    content: z.boolean().default(false).describe('also send the messages (system instructions, input and output messages) of every call; off by default'),
    batch_spans: z.number().int().positive().default(512).describe('spans sent per request (whole samples; a request waits for the last to be answered)'),
  })
  .describe('OpenTelemetry traces (OTLP/HTTP) in the GenAI semantic conventions: one trace per sample — invoke_agent per participant nested by spawn, chat per call, execute_tool per tool call');
export type OtlpOptions = z.input<typeof OtlpOptions>;

/** Ended spans, held until they are sent (the SDK's batch processor drops spans when its queue is full: not here). */
class Collected implements SpanProcessor {
  spans: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Each sample's trace sent to an OTLP/HTTP endpoint, in request order, with backpressure: a batch of whole samples is
 * sent and answered before more samples are read. A refusal or an unreachable endpoint is an error naming it (the
 * samples before were sent). `written`: samples sent; samples without captured calls send nothing (`skipped`).
 */
export function createOtlpSink(options: OtlpOptions): Sink<FinishedSample> & { skipped(): number } {
  const o = OtlpOptions.parse(options);
  const target = otlpTarget(o.endpoint, o.protocol);
  const name = 'otlp';
  let skipped = 0;
  return {
    name,
    skipped: () => skipped,
    async consume(input: AsyncIterable<FinishedSample>, ctx: StageContext): Promise<SinkReport> {
      const collected = new Collected();
      const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'roller', 'service.version': rollerVersion }), spanProcessors: [collected] });
      const tracer = provider.getTracer('agent-roller', rollerVersion);
      const exporter = await otlpExporter(target);
      let received = 0;
      let sent = 0;
      let pending = 0;
      const flush = async () => {
        if (collected.spans.length === 0) return;
        const spans = collected.spans;
        collected.spans = [];
        const aborted = abortPromise(ctx.signal);
        try {
          await Promise.race([sendSpans(exporter, spans, target.url), aborted.promise]);
        } finally {
          aborted.dispose();
        }
        sent += pending;
        pending = 0;
      };
      try {
        for await (const sample of abortableInput(input, ctx.signal)) {
          received++;
          const made = await sampleTrace(sample, tracer, { content: o.content });
          if (!made) {
            skipped++;
            continue;
          }
          pending++;
          if (collected.spans.length >= o.batch_spans) await flush();
        }
        await flush();
      } finally {
        await exporter.shutdown().catch(() => {});
        await provider.shutdown().catch(() => {});
      }
      ctx.counters.add(name, 'received', received);
      ctx.counters.add(name, 'emitted', sent);
      return { name, received, written: sent };
    },
  };
}
