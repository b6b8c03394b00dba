export * from './attribute.js';
export * from './relations.js';
