export * from './core/index.js';
export * from './schemas/index.js';
export * from './transforms/protocols/index.js';
export * from './sources/proxy/index.js';
export * from './sources/scripted-model/index.js';
export * from './sinks/index.js';
export * from './transforms/capture/index.js';
export * from './harnesses/native-capture.js';
