import type { DeliveryRecogniser } from '../../transforms/capture/evidence.js';
import { wireProtocol } from '../../transforms/protocols/index.js';

/**
 * Claude Code delivers a background sub-agent's result as a <task-notification> user message: it is that child's
 * only when it holds both the child's task id and its spawn's tool-use id (the same text without those ids is no proof).
 */
export const claudeCodeDelivery: DeliveryRecogniser = (protocol, body, child) => {
  const tool = child.spawn_tool_call_id;
  if (protocol !== 'anthropic-messages' || tool === null) return false;
  return wireProtocol(protocol)!
    .userTexts(body)
    .some((t) => t.includes('<task-notification>') && t.includes(`<task-id>${child.native_id}</task-id>`) && t.includes(`<tool-use-id>${tool}</tool-use-id>`));
};
