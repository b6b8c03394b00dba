/**
 * An OTLP/HTTP trace receiver for the tests: a real HTTP server on loopback that decodes each request with
 * OpenTelemetry's own generated protobuf code (@opentelemetry/otlp-transformer's root) or, for http/json, as the OTLP
 * JSON encoding, into one flat list of spans. It can be told to refuse requests (a collector that is down).
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

type Json = Record<string, any>;
const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root') as Json;
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code: number; message: string };
  resource: Record<string, unknown>;
}

export interface Receiver {
  url: string;
  spans: ReceivedSpan[];
  requests: { contentType: string; headers: IncomingHttpHeaders }[];
  /** Answer every request with this HTTP status from now on (200 again with 200). */
  answer(status: number): void;
  close(): Promise<void>;
}

const hex = (v: unknown): string => (v === undefined || v === null || v === '' ? '' : typeof v === 'string' ? (/^[0-9a-f]*$/i.test(v) ? v.toLowerCase() : Buffer.from(v, 'base64').toString('hex')) : Buffer.from(v as Uint8Array).toString('hex'));

function value(v: Json): unknown {
  if (v === undefined || v === null) return null;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return ((v.arrayValue?.values ?? []) as Json[]).map(value);
  return JSON.stringify(v);
}
const attributes = (list: Json[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key as string, value(a.value as Json)]));
const nanosToMs = (n: unknown) => Number(BigInt(String(n)) / 1_000_000n);

function flatten(request: Json): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resourceSpans ?? []) as Json[]) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of (rs.scopeSpans ?? []) as Json[]) {
      for (const s of (ss.spans ?? []) as Json[]) {
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: Number(s.kind ?? 0),
          startMs: nanosToMs(s.startTimeUnixNano),
          endMs: nanosToMs(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          links: ((s.links ?? []) as Json[]).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: attributes(l.attributes) })),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' },
          resource,
        });
      }
    }
  }
  return out;
}

export async function startReceiver(): Promise<Receiver> {
  const spans: ReceivedSpan[] = [];
  const requests: Receiver['requests'] = [];
  let status = 200;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const contentType = String(req.headers['content-type'] ?? '');
    requests.push({ contentType, headers: req.headers });
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'text/plain' }).end('refused by the test');
      return;
    }
    const request = contentType.includes('json')
      ? (JSON.parse(body.toString('utf8')) as Json)
      : (ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, bytes: String, defaults: false }) as Json);
    spans.push(...flatten(request));
    res.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' }).end(contentType.includes('json') ? '{}' : Buffer.alloc(0));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    answer: (s) => (status = s),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => {});
    },
  };
}
