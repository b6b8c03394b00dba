import type { DeliveryRecogniser } from '../../transforms/capture/evidence.js';
import { wireProtocol } from '../../transforms/protocols/index.js';

/** dsh settles a background sub-agent with a user message that opens with `Background subagent <child session id> `. */
export const deepSeekDelivery: DeliveryRecogniser = (protocol, body, child) =>
  protocol === 'openai-chat-completions' && wireProtocol(protocol)!.userTexts(body).some((t) => t.startsWith(`Background subagent ${child.native_id} `));
