export * from './call-record.js';
export * from './headers.js';
export * from './raw-log.js';
export * from './recording-proxy.js';
export * from './response-tap.js';
export * from './raw-json.js';
export * from './websocket-relay.js';
