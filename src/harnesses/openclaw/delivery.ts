import type { DeliveryRecogniser } from '../../transforms/capture/evidence.js';
import { wireProtocol } from '../../transforms/protocols/index.js';

/** OpenClaw delivers a child's completion as an event: a user message from `source: subagent` naming its `session_key`. */
export const openClawDelivery: DeliveryRecogniser = (protocol, body, child) => {
  return (wireProtocol(protocol)?.userTexts(body) ?? [])
    .some((t) => {
      const lines = t.split('\n');
      return lines.includes('source: subagent') && lines.includes(`session_key: ${child.native_id}`);
    });
};
