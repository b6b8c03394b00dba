export * from './finalize.js';
