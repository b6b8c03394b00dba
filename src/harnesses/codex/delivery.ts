import type { DeliveryRecogniser } from '../../transforms/capture/evidence.js';
import { contentText } from '../../transforms/protocols/index.js';

type Json = Record<string, any>;

/**
 * Codex delivers a child's result in three ways, each naming the child: a wait_agent output whose status names its
 * thread as completed (v1), a <subagent_notification> user message naming it (agent_path) as completed (v1, a child
 * that finished after the wait), or a FINAL_ANSWER agent_message authored by its agent path (v2).
 */
export const codexDelivery: DeliveryRecogniser = (protocol, body, child, agentPath) => {
  if (protocol !== 'openai-responses') return false;
  return ((Array.isArray(body.input) ? body.input : []) as Json[]).some((it) => {
    if (it.type === 'function_call_output' && typeof it.output === 'string') {
      try {
        const out = JSON.parse(it.output) as Json;
        return out.status?.[child.native_id]?.completed !== undefined;
      } catch {
        return false;
      }
    }
    if (it.type === 'agent_message') return agentPath !== undefined && it.author === agentPath && contentText(it.content).includes('FINAL_ANSWER');
    if (it.role !== 'user') return false;
    const t = contentText(it.content);
    return t.includes('<subagent_notification>') && t.includes(`"agent_path":"${child.native_id}"`) && t.includes('"completed"');
  });
};
