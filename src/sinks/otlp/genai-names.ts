/**
 * The OpenTelemetry GenAI semantic conventions roller writes (attribute names and operation values), in one place.
 * tests/unit/sinks/otlp-spans.test.ts checks each against @opentelemetry/semantic-conventions' own constants (a dev
 * dependency: the names are experimental there and move between releases, so they are not imported at run time).
 */
export const GENAI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  agentId: 'gen_ai.agent.id',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

export const OPERATION = { chat: 'chat', invokeAgent: 'invoke_agent', executeTool: 'execute_tool' } as const;
export const PROVIDER = { anthropic: 'anthropic', openai: 'openai' } as const;
