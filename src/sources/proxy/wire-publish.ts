import { conversationKey, DeltaWindow } from './body-delta.js';
import { readWireFrames } from './wire-frames.js';
import { WireLogWriter, type BodyRef, type RequestMeta } from './wire-log.js';

/**
 * The wire log as a published capture keeps it under raw/: every frame as captured, except that a request whose
 * context is in calls.jsonl holds a body_ref to it instead of its bytes (seeds/000: "the request body is not stored
 * a second time"; `withRefs` names those calls), and any other request body that repeats an earlier one is stored as
 * a delta (body-delta.ts). Reading it back needs `callsJsonlBodies`.
 */
export async function publishWireLog(src: string, dest: string, withRefs: ReadonlySet<string>): Promise<void> {
  const out = await WireLogWriter.open(dest);
  const window = new DeltaWindow();
  try {
    for await (const f of readWireFrames(src)) {
      if (f.k !== 'q') {
        out.append(f.c, f.k, f.m as object | undefined, f.body);
      } else {
        const { content_encoding, ...rest } = f.m as RequestMeta;
        if (withRefs.has(f.c) && rest.body_omitted === undefined) {
          const ref: BodyRef = { file: 'calls.jsonl', call_id: f.c, pointer: '/context', ...(content_encoding === undefined ? {} : { wire_content_encoding: content_encoding }) };
          out.append(f.c, 'q', { ...rest, body_ref: ref });
        } else if (f.body.length > 0 && content_encoding === undefined && rest.body_omitted === undefined) {
          // The window's rule, as readers apply it: every whole body in the log is remembered, a delta or not.
          const key = conversationKey(rest.identity);
          const delta = window.encode(key, f.body);
          window.remember(key, f.c, f.body);
          out.append(f.c, 'q', delta ? { ...rest, delta } : rest, delta ? f.body.subarray(delta.prefix, f.body.length - delta.suffix) : f.body);
        } else out.append(f.c, 'q', f.m as object, f.body);
      }
      if (out.backedUp) await out.drained();
    }
  } finally {
    await out.close();
  }
}
