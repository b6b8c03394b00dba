import { mkdir, writeFile } from 'node:fs/promises';
import { buildDirectory } from '../../core/built-directory.js';
import { dirname, join, resolve } from 'node:path';
import { answer, staticFileOf } from './api.js';
import { viewAssets } from './assets.js';
import { TRAJECTORY_PAGE, type ViewData } from './view-data.js';

export interface StaticExportReport {
  out: string;
  files: number;
  bytes: number;
}

/**
 * `roller view --static OUT`: the same page and every answer it can ask for, as files that open from disk (file://):
 * each answer a guarded classic script under data/ (a page from file:// may load scripts, never fetch; served over HTTP
 * the page reads it as text, and another site including it gets nothing). The run table is
 * written whole (the page sorts and filters it itself). Built beside OUT and renamed into place: a failure leaves no
 * partial export. One sample is held at a time.
 */
export async function exportStatic(data: ViewData, outDir: string, onSample?: (done: number, total: number) => void): Promise<StaticExportReport> {
  const out = resolve(outDir);
  let files = 0;
  let bytes = 0;
  await buildDirectory(out, 'the static view', async (building) => {
    const write = async (name: string, text: string) => {
      const path = join(building, name);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      files++;
      bytes += Buffer.byteLength(text);
    };
    // Guarded (src/view-ui/data.ts): a page of another site that includes it as a script gets nothing.
    const put = async (key: string, value: unknown) => write(staticFileOf(key), `location.protocol==="file:"&&rollerData(${JSON.stringify(key)},${JSON.stringify(value)});\n`);
    for (const [name, text] of Object.entries(await viewAssets('static'))) await write(name, text);
    await put('run', data.run());
    await data.table.index();
    await put('samples-all', { rows: data.table.rows, total: data.table.rows.length });
    let done = 0;
    for (const row of data.table.rows) {
      const sample = (await answer(data, `sample/${row.index}`)) as { has: { actf: boolean; sft: boolean; segments: { order: number }[]; dialogue: boolean } };
      await put(`sample/${row.index}`, sample);
      const { calls } = (await data.calls(row.index)) as { calls: { call_id: string }[] };
      await put(`sample/${row.index}/calls`, { calls });
      for (const c of calls) await put(`sample/${row.index}/call/${c.call_id}`, await data.call(row.index, c.call_id));
      const pages = async (key: string) => {
        for (let offset = 0; ; offset += TRAJECTORY_PAGE) {
          const page = (await answer(data, `${key}/${offset}`)) as { more: boolean };
          await put(`${key}/${offset}`, page);
          if (!page.more) break;
        }
      };
      if (sample.has.actf) await pages(`sample/${row.index}/actf`);
      if (sample.has.sft) await pages(`sample/${row.index}/sft`);
      for (const seg of sample.has.segments) await pages(`sample/${row.index}/segment/${seg.order}`);
      if (sample.has.dialogue) await put(`sample/${row.index}/dialogue`, await data.dialogue(row.index));
      onSample?.(++done, data.table.rows.length);
    }
  });
  return { out, files, bytes };
}
