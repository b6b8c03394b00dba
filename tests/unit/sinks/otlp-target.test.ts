/**
 * The OTLP sink's names and target: every GenAI attribute and operation roller writes is the semantic conventions
 * package's own constant; the endpoint and protocol are resolved as the OTLP exporter specification says.
 */
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { GENAI, OPERATION, PROVIDER } from '../../../src/sinks/otlp/genai-names.js';
import { otlpTarget } from '../../../src/sinks/otlp/exporter.js';

const constant = (key: string) => (semconv as Record<string, unknown>)[key];

describe('OTLP GenAI names and target', () => {
  it('every attribute name is a GenAI semantic-conventions constant', () => {
    const known = new Set(Object.entries(semconv).filter(([k]) => k.startsWith('ATTR_GEN_AI_')).map(([, v]) => v));
    for (const name of Object.values(GENAI)) expect(known.has(name), name).toBe(true);
    expect(OPERATION).toEqual({ chat: constant('GEN_AI_OPERATION_NAME_VALUE_CHAT'), invokeAgent: constant('GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT'), executeTool: constant('GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL') });
    expect(PROVIDER).toEqual({ anthropic: constant('GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC'), openai: constant('GEN_AI_PROVIDER_NAME_VALUE_OPENAI') });
  });

  it('endpoint: the option (a base), then the traces variable (as is), then the general one (a base); protocol likewise', () => {
    expect(otlpTarget('http://h:4318/', undefined, {})).toEqual({ url: 'http://h:4318/v1/traces', protocol: 'http/protobuf' });
    expect(otlpTarget(undefined, undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://g' })).toEqual({ url: 'http://t/x', protocol: 'http/protobuf' });
    expect(otlpTarget(undefined, undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://g/otel', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({ url: 'https://g/otel/v1/traces', protocol: 'http/json' });
    expect(otlpTarget('http://h', 'http/json', { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).protocol).toBe('http/json');
    expect(() => otlpTarget(undefined, undefined, {})).toThrow(/no OTLP endpoint/);
    expect(() => otlpTarget('ftp://h', undefined, {})).toThrow(/not an http\(s\) URL/);
    expect(() => otlpTarget('http://h', undefined, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/grpc is not supported/);
  });
});
