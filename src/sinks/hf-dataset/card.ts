import { stringify } from 'yaml';
import { hfFeature, type Columns } from '../../core/parquet/columns.js';

export interface DatasetConfig {
  name: 'default' | 'segments' | 'subagents';
  /** Directory of its shards, relative to the dataset. */
  dir: string;
  columns: Columns;
  rows: number;
  /** Its rows as JSON, in bytes (the split's size uncompressed). */
  dataBytes: number;
  shards: { name: string; bytes: number }[];
}

export interface CardFacts {
  title: string;
  rollerVersion: string;
  configs: DatasetConfig[];
  samples: number;
  /** Why samples gave no row, with how many. */
  excluded: Record<string, number>;
  /** "claude-code 2.1.332" → samples */
  harnesses: Record<string, number>;
  models: Record<string, number>;
  runs: string[];
}

/**
 * The dataset card (README.md): YAML front matter the Hub reads (`configs` naming each config's files, `dataset_info`
 * with its features and split sizes), then what the rows are, where they came from and what was left out.
 */
export function datasetCard(f: CardFacts): string {
  const front = {
    configs: f.configs.map((c) => ({ config_name: c.name, data_files: [{ split: 'train', path: `${c.dir}/train-*` }] })),
    dataset_info: f.configs.map((c) => {
      const bytes = c.shards.reduce((n, s) => n + s.bytes, 0);
      // `datasets` reads a split only with its name, num_bytes and num_examples (else it ignores dataset_info).
      return { config_name: c.name, features: c.columns.map(([n, t]) => hfFeature(n, t)), splits: [{ name: 'train', num_bytes: c.dataBytes, num_examples: c.rows }], download_size: bytes, dataset_size: c.dataBytes };
    }),
    tags: ['agents', 'tool-use', 'sft', 'roller'],
    task_categories: ['text-generation'],
  };
  const table = (rows: [string, number][]) => (rows.length === 0 ? 'none\n' : `| | samples |\n|---|---|\n${rows.map(([k, n]) => `| ${k} | ${n} |`).join('\n')}\n`);
  const linear = f.configs.find((c) => c.name === 'default')!;
  const segments = f.configs.find((c) => c.name === 'segments');
  const subagents = f.configs.find((c) => c.name === 'subagents');
  return `---
${stringify(front, { lineWidth: 0 })}---

# ${f.title}

Agent trajectories as supervised fine-tuning records, written by roller ${f.rollerVersion} (\`roller export --format hf\`)
from ${f.runs.length === 1 ? `the run \`${f.runs[0]}\`` : `the runs ${f.runs.map((r) => `\`${r}\``).join(', ')}`}.

## Configs

- \`default\`: ${linear.rows} linear records (${linear.shards.length} shard${linear.shards.length === 1 ? '' : 's'}), the rows of the run's \`sft.jsonl\` in request order: one per sample
  whose trajectory converted to a valid SFT record and whose run ended ok. Train on every assistant message.
${segments ? `- \`segments\`: ${segments.rows} compaction segments of compacted samples (the run's \`sft_segments.jsonl\`): each starts with the context
  the model really received after a compaction; only assistant messages from \`target_start_index\` on are targets (mask the rest).\n` : ''}${
  subagents
    ? `- \`subagents\`: ${subagents.rows} sub-agent records (the run's \`sft_subagents.jsonl\`): each completed sub-agent's own conversation
  (its system prompt and tools as its first request sent them), \`subagent\` naming it, its parent and the spawning tool call.\n`
    : ''
}
## Columns

- \`messages\`: the conversation. Every message has \`role\` and \`content\` (a string; an image is an \`<image>\` placeholder
  matched in order by \`images\`); an assistant message also \`reasoning_content\` and \`tool_calls\` (\`function.arguments\` is
  the JSON text of the arguments; a custom tool's input is its own string); a tool message \`tool_call_id\`. A field a
  role does not have is null.
- \`tools\`: the JSON text of the tools the agent was given (each with its JSON Schema): \`json.loads(row["tools"])\`.
- \`images\`: base64 data URIs, in placeholder order (null when the record has none).
- \`provenance\`: not for training — the run, sample directory, request index, segment number, task, model, harness and
  version, sample status, grader verdict and scores, and the sample's tokens (input, cache creation, cache read, output,
  reasoning), model requests and reported cost.

## Where it came from

${f.samples} samples read. Harnesses:

${table(Object.entries(f.harnesses))}
Models:

${table(Object.entries(f.models))}
Left out (no row), by reason:

${table(Object.entries(f.excluded))}
## Loading

\`\`\`python
from datasets import load_dataset
rows = load_dataset("parquet", data_files="data/train-*.parquet", split="train")
\`\`\`
`;
}
