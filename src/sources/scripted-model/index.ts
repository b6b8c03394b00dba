export * from './conversation.js';
export * from './encode-anthropic.js';
export * from './encode-openai.js';
export * from './respond.js';
export * from './script.js';
export * from './default-script.js';
export * from './server.js';
