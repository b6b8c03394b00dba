export * from './core/index.js';
export * from './schemas/index.js';
