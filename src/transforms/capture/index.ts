export * from './attribute.js';
export * from './correlate.js';
export * from './coverage.js';
export * from './evidence.js';
export * from './relations.js';
export * from './statuses.js';
export * from './view.js';
export * from './token-agreement.js';
