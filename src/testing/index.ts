/** `agent-roller/testing`: the sink conformance suite for a user's own sinks (run it under vitest). */
export { describeSinkConformance, type ConformanceEnv, type SinkUnderTest } from './sink-conformance.js';
