/* The run page: totals and the samples table (server-paged, or sorted here in a static export). */
const COLUMNS: [key: string, label: string, num: boolean][] = [
  ['index', '#', true],
  ['task', 'task', false],
  ['model', 'model', false],
  ['harness', 'harness', false],
  ['status', 'status', false],
  ['grade', 'grade', false],
  ['score', 'score', true],
  ['sft', 'SFT', false],
  ['tokens', 'tokens', true],
  ['cost', 'cost', true],
  ['duration', 'duration', true],
  ['subagents', 'sub-agents', true],
];

/** The static export's table: the same filter and order as the server's (src/pipelines/view/run-table.ts). */
function queryRows(rows: Json[], q: { offset: number; limit: number; sort: string; desc: boolean; q: string; status: string }): Json {
  const words = q.q.toLowerCase().split(/\s+/).filter(Boolean);
  const key: Record<string, (r: Json) => string | number | null> = {
    index: (r) => r.index, task: (r) => r.task_id, model: (r) => r.model, harness: (r) => r.harness, status: (r) => r.status, grade: (r) => r.grade,
    score: (r) => r.score, sft: (r) => (r.sft ? (r.sft.eligible ? 1 : 0) : null), tokens: (r) => totalTokens(r.usage), cost: (r) => r.usage?.cost_usd ?? null,
    duration: (r) => r.duration_ms, subagents: (r) => r.subagents,
  };
  const by = key[q.sort] ?? key.index!;
  const matched = rows.filter((r) => {
    if (q.status && r.status !== q.status) return false;
    const text = `${r.task_id} ${r.model} ${r.status} ${r.harness ?? ''} ${r.grade ?? ''} ${r.error ?? ''} ${r.sft?.reason ?? ''}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  matched.sort((a, b) => {
    const x = by(a);
    const y = by(b);
    if (x === null || y === null) return x === y ? a.index - b.index : x === null ? 1 : -1;
    const c = x < y ? -1 : x > y ? 1 : a.index - b.index;
    return q.desc ? -c : c;
  });
  return { rows: matched.slice(q.offset, q.offset + q.limit), matched: matched.length, total: rows.length, indexed: rows.length };
}

let refreshTimer: number | undefined;

async function runPage(page: HTMLElement, run: Json, query: URLSearchParams, seq: number): Promise<void> {
  setCrumbs(run);
  const info = run.info;
  const state = { sort: query.get('sort') ?? 'index', desc: query.get('desc') === '1', q: query.get('q') ?? '', status: query.get('status') ?? '', offset: Number(query.get('offset') ?? 0) };
  const limit = run.page as number;
  const table = STATIC ? queryRows((await get('samples-all')).rows, { ...state, limit }) : await get('samples', { ...state, desc: state.desc ? 1 : 0, limit });
  const sum = info.summary;
  const u = info.usage;
  page.append(
    h('h1', {}, `run ${info.run_name} `, statusEl(info.state)),
    h('p', { class: 'muted' }, `${run.dir} · ${info.config?.harness ?? ''} · ${info.requests.tasks} tasks × ${info.requests.models} models · created ${info.created_at}`),
    h('div', { class: 'cards', id: 'totals' },
      h('div', { class: 'card' }, 'samples', h('b', {}, `${fmt(info.progress.processed)} / ${fmt(info.progress.total)}`)),
      h('div', { class: 'card' }, 'ok · error · timeout', h('b', {}, `${sum.ok} · ${sum.error} · ${sum.timeout}`)),
      h('div', { class: 'card' }, 'tokens', h('b', { class: 'tokens' }, tokensText(u))),
      h('div', { class: 'card' }, 'cost', h('b', {}, usd(u?.cost_usd))),
      h('div', { class: 'card' }, 'model calls', h('b', {}, fmt(u?.requests))),
      sum.training ? h('div', { class: 'card', id: 'training' }, 'training (SFT)', h('b', {}, `${sum.sft_included ?? '–'} in sft.jsonl · ${sum.sft_segmented ?? 0} segmented · ${sum.sft_excluded ?? '–'} excluded`), h('span', { class: 'muted' }, Object.entries(sum.training.excluded ?? {}).map(([k, v]) => `${k}: ${v}`).join(', ') || 'nothing excluded by audit')) : null,
      sum.grades ? h('div', { class: 'card' }, 'grades', h('b', {}, `${sum.grades.passed} passed · ${sum.grades.failed} failed`), h('span', { class: 'muted' }, `${sum.grades.graded} graded, ${sum.grades.timeout} timeout, ${sum.grades.error} error`)) : null,
    ),
  );
  const go = (patch: Partial<typeof state>) => {
    const next = { ...state, ...patch };
    location.hash = link([], { sort: next.sort === 'index' ? '' : next.sort, desc: next.desc ? 1 : '', q: next.q, status: next.status, offset: next.offset || '' });
  };
  const search = h('input', { type: 'search', id: 'filter', placeholder: 'filter: task, model, status, error…', value: state.q, size: 40 }) as HTMLInputElement;
  search.addEventListener('change', () => go({ q: search.value, offset: 0 }));
  const statusSelect = h('select', { id: 'status-filter', onchange: (e) => go({ status: (e.target as HTMLSelectElement).value, offset: 0 }) }, ...['', 'ok', 'error', 'timeout', 'skipped'].map((v) => h('option', { value: v, selected: v === state.status }, v || 'any status')));
  const from = table.matched === 0 ? 0 : state.offset + 1;
  const to = state.offset + table.rows.length;
  page.append(
    h('h2', {}, 'samples'),
    h('div', { class: 'toolbar' },
      search, statusSelect,
      h('button', { id: 'prev', disabled: state.offset === 0, onclick: () => go({ offset: Math.max(0, state.offset - limit) }) }, '‹ prev'),
      h('span', { id: 'range' }, `${fmt(from)}–${fmt(to)} of ${fmt(table.matched)}${table.matched !== table.total ? ` (of ${fmt(table.total)})` : ''}`),
      h('button', { id: 'next', disabled: to >= table.matched, onclick: () => go({ offset: state.offset + limit }) }, 'next ›'),
      table.indexed < table.total ? h('span', { class: 'muted', id: 'indexing' }, `reading the samples' info.json: ${fmt(table.indexed)} of ${fmt(table.total)}`) : null,
    ),
  );
  const head = h('tr', {}, ...COLUMNS.map(([key, label, num]) => h('th', { class: `sortable ${num ? 'num' : ''} ${state.sort === key ? `sorted ${state.desc ? 'desc' : ''}` : ''}`, 'data-sort': key, onclick: () => go({ sort: key, desc: state.sort === key ? !state.desc : num, offset: 0 }) }, label)));
  const body = h('tbody', {}, ...table.rows.map((r: Json) => h('tr', { 'data-index': r.index },
    h('td', { class: 'num' }, r.index),
    h('td', {}, h('a', { href: link(['sample', r.index]) }, r.task_id)),
    h('td', {}, r.model),
    h('td', {}, r.harness ?? '–'),
    h('td', { title: r.error ?? r.unreadable ?? '' }, statusEl(r.status)),
    h('td', {}, r.grade ? statusEl(r.grade) : '–'),
    h('td', { class: 'num' }, r.score ?? '–'),
    h('td', { title: r.sft?.reason ?? '' }, r.sft ? (r.sft.eligible ? 'eligible' : `no: ${r.sft.reason ?? ''}`) : '–'),
    h('td', { class: 'num', title: tokensText(r.usage) }, fmt(totalTokens(r.usage))),
    h('td', { class: 'num' }, usd(r.usage?.cost_usd)),
    h('td', { class: 'num' }, ms(r.duration_ms)),
    h('td', { class: 'num' }, r.subagents ?? '–'),
  )));
  page.append(h('table', { id: 'samples' }, h('thead', {}, head), body));
  window.clearTimeout(refreshTimer);
  if (table.indexed < table.total) refreshTimer = window.setTimeout(() => seq === renderSeq && void render(), 700);
}
