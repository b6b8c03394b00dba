/** The model API protocols roller records and a model config may name (calls.jsonl `protocol`, less `other`). */
export const API_PROTOCOLS = ['anthropic-messages', 'openai-chat-completions', 'openai-responses'] as const;
export type ApiProtocol = (typeof API_PROTOCOLS)[number];
