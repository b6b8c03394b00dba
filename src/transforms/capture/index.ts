export * from './attribute.js';
export * from './relations.js';
export * from './finalize.js';
export * from './validate.js';
export * from './view.js';
export * from './coverage.js';
