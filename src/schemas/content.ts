import { z } from 'zod';

/** Content blocks as ACTF keeps them: text, images (base64 or a path), and anything else kept as-is. */
export const TextBlock = z.strictObject({ type: z.literal('text'), text: z.string() });
export const ImageBlock = z.strictObject({
  type: z.literal('image'),
  source: z.union([
    z.strictObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
    z.strictObject({ type: z.literal('path'), media_type: z.string().optional(), path: z.string() }),
    z.strictObject({ type: z.literal('url'), media_type: z.string().optional(), url: z.string() }),
  ]),
});
/** A block of another type (audio, documents, harness-specific) is kept, never dropped. */
export const OtherBlock = z
  .looseObject({ type: z.string().min(1) })
  .refine((b) => b.type !== 'text' && b.type !== 'image', { message: 'a text or image block is missing its fields (text, or source)' });
export const ContentBlock = z.union([TextBlock, ImageBlock, OtherBlock]);
export type ContentBlock = z.infer<typeof ContentBlock>;
export const Content = z.union([z.string(), z.array(ContentBlock)]);
