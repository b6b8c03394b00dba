/** The output families `roller reprocess --only` can select; the others are copied from the archive as bytes. */
export const REPROCESS_TARGETS = ['actf', 'sft', 'capture'] as const;
export type ReprocessTarget = (typeof REPROCESS_TARGETS)[number];
