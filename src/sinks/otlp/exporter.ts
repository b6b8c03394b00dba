import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ErrorCode, RollerError } from '../../core/errors.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

/**
 * Where traces go, as the OTLP exporter specification says: an endpoint given to roller (a base URL, like
 * OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces is appended), else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. The protocol likewise (http/protobuf by default). Headers (an API key of a
 * tracing service) are read by the exporter from OTEL_EXPORTER_OTLP_HEADERS / _TRACES_HEADERS and never pass through
 * roller's options, files or messages.
 */
export function otlpTarget(endpoint: string | undefined, protocol: string | undefined, env: NodeJS.ProcessEnv = process.env): { url: string; protocol: OtlpProtocol } {
  const base = (u: string) => `${u.replace(/\/+$/, '')}/v1/traces`;
  const url = endpoint ? base(endpoint) : env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT ? base(env.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined);
  if (!url) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'no OTLP endpoint: pass --endpoint URL (e.g. http://127.0.0.1:4318) or set OTEL_EXPORTER_OTLP_ENDPOINT');
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `the OTLP endpoint ${url} is not an http(s) URL`);
  }
  const chosen = protocol ?? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  if (chosen !== 'http/protobuf' && chosen !== 'http/json') throw new RollerError(ErrorCode.INVALID_OPTIONS, `OTLP protocol ${chosen}: roller sends http/protobuf or http/json (grpc is not supported; most collectors take both on port 4318)`);
  return { url, protocol: chosen };
}

/**
 * The OpenTelemetry SDK's own OTLP/HTTP trace exporter for that protocol, loaded when first needed. Its timeout (retries
 * included) is the exporter's: OTEL_EXPORTER_OTLP_TRACES_TIMEOUT / OTEL_EXPORTER_OTLP_TIMEOUT, 10 s by default.
 */
export async function otlpExporter(target: { url: string; protocol: OtlpProtocol }): Promise<SpanExporter> {
  const { OTLPTraceExporter } = target.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: target.url });
}

/** One batch sent and answered (the exporter retries what the spec calls retryable); a refusal is a typed error. */
export async function sendSpans(exporter: SpanExporter, spans: ReadableSpan[], url: string): Promise<void> {
  const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans, resolve));
  if (result.code !== 0) {
    throw new RollerError(ErrorCode.SERVICE_UNAVAILABLE, `the OTLP endpoint ${url} did not take ${spans.length} spans (${result.error?.message ?? 'no reason given'}); check that a collector listens there and takes OTLP/HTTP`);
  }
}
