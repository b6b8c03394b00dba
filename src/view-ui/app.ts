/*
 * roller view's page: a classic script (a module does not load from file://), no dependencies, no markup built from
 * strings — every value from a run's files enters the page as text. Routes live in the hash (#/sample/2/call/ID),
 * so a link is shareable and the static export works from disk. Data comes from /api/KEY (server) or data/KEY.js
 * (static export), the same values either way.
 */

type Json = any;
type Child = Node | string | number | null | undefined | false | Child[];

const STATIC = document.documentElement.dataset.mode === 'static';
const main = document.getElementById('main')!;
const crumbs = document.getElementById('crumbs')!;
const statusLine = document.getElementById('status')!;

// ---- DOM ----

function h(tag: string, attrs: Record<string, string | number | boolean | ((e: Event) => void) | null | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v as EventListener);
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (Array.isArray(c)) append(el, c);
    else if (c !== null && c !== undefined && c !== false) el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

const SVG = 'http://www.w3.org/2000/svg';
function s(tag: string, attrs: Record<string, string | number>, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  append(el, children);
  return el;
}

// One formatter for every number (toLocaleString builds one per call: 8,000 of them were half a second on a 2,000-call timeline).
const NUMBER = new Intl.NumberFormat('en-US');
const fmt = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : NUMBER.format(n));
const usd = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : `$${n < 0.01 ? n.toFixed(4) : n.toFixed(2)}`);
const ms = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(1)} s`);
const pill = (text: string, cls = ''): HTMLElement => h('span', { class: `pill ${cls}` }, text);
const statusEl = (st: string | null | undefined): HTMLElement => h('span', { class: `status-${st ?? 'unknown'}` }, st ?? 'unknown');

/** Tokens as `roller usage` prints them: in · cache write · cache read · out. */
function tokensText(t: Json): string {
  if (!t) return '–';
  const cacheRead = t.cache_read ?? t.cached_input ?? 0;
  return `in ${fmt(t.input)} · cache write ${fmt(t.cache_creation)} · cache read ${fmt(cacheRead)} · out ${fmt(t.output)}`;
}
const totalTokens = (u: Json): number | null => (u ? u.input + (u.cached_input ?? u.cache_read ?? 0) + u.cache_creation + u.output : null);

/** Long text shown clipped, whole on a click (a 1 MB tool result does not lay out until asked). */
function longText(text: string, limit = 4000): HTMLElement {
  if (text.length <= limit) return h('pre', {}, text);
  const pre = h('pre', {}, text.slice(0, limit));
  const more = h('button', { onclick: () => { pre.textContent = text; more.remove(); } }, `show all ${fmt(text.length)} characters`);
  return h('div', {}, pre, more);
}

// ---- data ----

const waiting = new Map<string, ((v: Json) => void)[]>();
(window as Json).rollerData = (key: string, value: Json) => {
  for (const resolve of waiting.get(key) ?? []) resolve(value);
  waiting.delete(key);
};

function staticFileOf(key: string): string {
  const bytes = (c: string) => Array.from(new TextEncoder().encode(c)).map((b) => `_${b.toString(16).padStart(2, '0')}`).join('');
  return `data/${key.replace(/[^A-Za-z0-9._/-]|\.\./g, bytes)}.js`;
}

class ApiError extends Error {}

async function get(key: string, params?: Record<string, string | number>): Promise<Json> {
  if (STATIC) {
    return new Promise((resolve, reject) => {
      waiting.set(key, [...(waiting.get(key) ?? []), resolve]);
      const script = h('script', { src: staticFileOf(key) }) as HTMLScriptElement;
      script.onerror = () => reject(new ApiError(`${staticFileOf(key)} is not in this export`));
      script.onload = () => script.remove();
      document.head.appendChild(script);
    });
  }
  const query = params ? `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}` : '';
  const res = await fetch(`api/${key.split('/').map(encodeURIComponent).join('/')}${query}`);
  const value = await res.json();
  if (!res.ok) throw new ApiError(value?.error?.message ?? `HTTP ${res.status}`);
  return value;
}

let runCache: Json = null;
const getRun = async (): Promise<Json> => (runCache ??= await get('run'));

// ---- routing ----

interface Route {
  path: string[];
  query: URLSearchParams;
}

function route(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = hash.split('?');
  return { path: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query) };
}

const link = (parts: (string | number)[], query?: Record<string, string | number | boolean>): string => {
  const q = query ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== '' && v !== false).map(([k, v]) => [k, String(v)])).toString() : '';
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join('/')}${q ? `?${q}` : ''}`;
};

let renderSeq = 0;
/** Shows the page being built now (a page with a slow part shows the rest first); render() shows it when done. */
type Commit = () => void;

async function render(): Promise<void> {
  const seq = ++renderSeq;
  const r = route();
  const page = h('div');
  const commit: Commit = () => {
    if (seq !== renderSeq) return;
    if (main.firstChild !== page) main.replaceChildren(page);
    document.body.dataset.firstAt ??= String(Math.round(performance.now()));
  };
  try {
    const run = await getRun();
    if (r.path.length === 0 && run.only !== null) {
      location.replace(link(['sample', run.only]));
      return;
    }
    if (r.path[0] === 'sample' && r.path[2] === 'call') await callPage(page, run, Number(r.path[1]), r.path[3]!);
    else if (r.path[0] === 'sample' && r.path[2] === 'trajectory') await trajectoryPage(page, run, Number(r.path[1]), r.query);
    else if (r.path[0] === 'sample') await samplePage(page, run, Number(r.path[1]), commit);
    else await runPage(page, run, r.query, seq);
  } catch (err) {
    page.replaceChildren(h('div', { class: 'error-box', id: 'error' }, (err as Error).message));
  }
  if (seq !== renderSeq) return;
  commit();
  document.body.dataset.readyAt = String(Math.round(performance.now()));
  document.body.dataset.ready = String(seq);
}

/** The trail from the run to this page; on the run page the run is plain text, elsewhere a link back to it. */
function setCrumbs(run: Json, ...items: [string, string | null][]): void {
  const name = `run ${run.info.run_name}`;
  crumbs.replaceChildren(items.length ? h('a', { href: '#/' }, name) : h('span', {}, name), ...items.map(([text, href]) => (href ? h('a', { href }, text) : h('span', {}, text))));
  document.title = [...items.map(([t]) => t).reverse(), `run ${run.info.run_name}`, 'roller view'].join(' · ');
}

// ---- run page ----

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

// ---- sample page ----

interface Tree {
  p: Json;
  kids: Tree[];
}

function treeOf(participants: Json[]): Tree[] {
  const nodes = new Map<string, Tree>(participants.map((p) => [p.participant, { p, kids: [] }]));
  const roots: Tree[] = [];
  for (const n of nodes.values()) (n.p.parent && nodes.get(n.p.parent) ? nodes.get(n.p.parent)!.kids : roots).push(n);
  return roots;
}

const flatten = (trees: Tree[]): Json[] => trees.flatMap((t) => [t.p, ...flatten(t.kids)]);

async function samplePage(page: HTMLElement, run: Json, index: number, commit: Commit): Promise<void> {
  const sample = await get(`sample/${index}`);
  const info = sample.info;
  setCrumbs(run, [`sample ${index} ${info.task_id}`, null]);
  // The call that spawned each child, from the spawn relations (the calls index may still be read).
  const spawnCall = new Map<string, string>();
  for (const r of sample.relations) if (r.type === 'spawn' && r.child_participant_id && r.parent_call_id !== 'unknown') spawnCall.set(r.child_participant_id, r.parent_call_id);
  append(page, [
    h('h1', {}, `${info.task_id} `, statusEl(info.status)),
    h('p', { class: 'muted' }, `${info.model} · ${info.harness.name} ${info.harness.version} · ${sample.path}`),
    info.error ? h('div', { class: 'error-box' }, `${info.error.code ?? ''} ${info.error.message}`) : null,
    h('div', { class: 'cards' },
      h('div', { class: 'card' }, 'tokens (all agents)', h('b', { class: 'tokens', id: 'sample-tokens' }, tokensText(info.usage))),
      h('div', { class: 'card' }, 'cost', h('b', {}, usd(info.usage?.cost_usd))),
      h('div', { class: 'card' }, 'model calls', h('b', {}, fmt(info.usage?.requests))),
      h('div', { class: 'card' }, 'duration', h('b', {}, ms(info.elapsed_ms))),
      h('div', { class: 'card' }, 'SFT', h('b', {}, info.runtime.sft_eligibility ? (info.runtime.sft_eligibility.eligible ? 'eligible' : 'not eligible') : '–'), h('span', { class: 'muted' }, info.runtime.sft_eligibility?.reason ?? '')),
      info.grade ? h('div', { class: 'card' }, 'grade', h('b', {}, statusEl(info.grade.status)), h('span', { class: 'muted' }, Object.entries(info.grade.scores).map(([k, v]) => `${k} ${v}`).join(', '))) : null,
    ),
    h('p', {}, sample.has.actf || sample.has.sft ? h('a', { href: link(['sample', index, 'trajectory']), id: 'trajectory-link' }, 'trajectory: ACTF and SFT side by side ›') : h('span', { class: 'muted' }, 'no ACTF or SFT for this sample')),
  ]);

  // The agent tree.
  const trees = treeOf(sample.participants);
  const manifestOf = new Map<string, Json>((sample.capture?.participants ?? []).map((p: Json) => [p.participant_id, p]));
  const node = (t: Tree): HTMLElement => {
    const p = t.p;
    const spawner = spawnCall.get(p.participant);
    const calls: string[] = manifestOf.get(p.participant)?.call_ids ?? [];
    return h('li', {},
      h('div', { class: 'participant', 'data-participant': p.participant },
        h('b', {}, p.role), ' ', h('span', { class: 'id' }, p.participant), ' ', statusEl(p.status),
        h('div', { class: 'tokens', 'data-tokens': JSON.stringify(p.tokens) }, p.tokens ? tokensText(p.tokens) : h('span', { class: 'muted' }, 'tokens unknown')),
        h('div', { class: 'muted' }, `${p.messages ?? 0} messages · ${calls.length} calls`,
          p.spawn_tool_call_id ? [' · spawned by ', spawner ? h('a', { href: link(['sample', index, 'call', spawner]) }, p.spawn_tool_call_id) : p.spawn_tool_call_id] : null),
        p.reason ? h('div', { class: 'muted' }, p.reason) : null,
      ),
      t.kids.length ? h('ul', { class: 'tree' }, ...t.kids.map(node)) : null,
    );
  };
  page.append(h('h2', {}, `agent tree (${sample.participants.length} participants)`), sample.participants.length ? h('ul', { class: 'tree root', id: 'agent-tree' }, ...trees.map(node)) : h('p', { class: 'muted' }, 'no participants recorded'));

  // Timeline and calls: filled in once the capture's calls are indexed (a big calls.jsonl is read once).
  const callsSection = h('div', { id: 'calls-section' }, sample.capture ? h('p', { class: 'muted' }, `reading the capture's calls.jsonl (${fmt(Math.round(sample.calls_bytes / 1e6))} MB)…`) : null);
  page.append(callsSection);

  if (sample.relations.length > 0) {
    page.append(h('h2', {}, `relations (${sample.relations.length})`), h('table', { id: 'relations' },
      h('thead', {}, h('tr', {}, ...['type', 'status', 'parent', 'child', 'tool call', 'parent call', 'in call', 'reason'].map((t) => h('th', {}, t)))),
      h('tbody', {}, ...sample.relations.map((r: Json) => h('tr', {},
        h('td', {}, r.type), h('td', {}, statusEl(r.status)), h('td', { class: 'mono' }, r.parent_participant_id ?? '–'), h('td', { class: 'mono' }, r.child_participant_id ?? '–'),
        h('td', { class: 'mono' }, r.tool_call_id ?? '–'),
        h('td', {}, callLink(index, r.parent_call_id)), h('td', {}, callLink(index, r.in_call_id)), h('td', { class: 'muted' }, r.reason ?? ''))))));
  }

  // Audits and warnings.
  const rt = info.runtime;
  page.append(h('h2', {}, 'audits'), h('dl', { class: 'kv', id: 'audits' },
    h('dt', {}, 'capture'), h('dd', {}, sample.capture ? `${sample.capture.status ?? ''} · coverage ${typeof sample.capture.coverage === 'object' ? JSON.stringify(sample.capture.coverage) : sample.capture.coverage ?? '–'} · lifecycle ${sample.capture.lifecycle ?? '–'}` : 'none'),
    h('dt', {}, 'conversion'), h('dd', {}, (rt.trajectory_conversion ?? []).map((c: Json) => `${c.target} ${c.status}${c.reason ? ` (${c.reason})` : ''}`).join(' · ') || '–'),
    h('dt', {}, 'completion'), h('dd', {}, rt.completion_audit ? `${rt.completion_audit.status}${rt.completion_audit.reason ? ` — ${rt.completion_audit.reason}` : ''}` : '–'),
    h('dt', {}, 'model identity'), h('dd', {}, rt.model_identity_audit ? `${rt.model_identity_audit.status}: asked ${(rt.model_identity_audit.requested_models ?? []).join(', ')}, answered ${(rt.model_identity_audit.response_models ?? []).join(', ')}` : '–'),
    h('dt', {}, 'attempts'), h('dd', {}, (info.attempts ?? []).map((a: Json) => `#${a.attempt} ${a.status} ${ms(a.elapsed_ms)}${a.error ? ` (${a.error.message})` : ''}`).join(' · ') || '–'),
    h('dt', {}, 'warnings'), h('dd', {}, (rt.warnings ?? []).length ? h('ul', {}, ...rt.warnings.map((w: string) => h('li', {}, w))) : 'none'),
  ));

  const dialogue = h('div');
  page.append(dialogue);
  commit();

  let calls: Json[] = [];
  try {
    calls = sample.capture ? (await get(`sample/${index}/calls`)).calls : [];
  } catch (err) {
    // The rest of the sample stays on the page: the tree, relations and audits come from other files.
    callsSection.replaceChildren(h('div', { class: 'error-box', id: 'error' }, (err as Error).message));
    return;
  }
  if (calls.length > 0) {
    const withCalls = { ...sample, calls };
    callsSection.replaceChildren(h('h2', {}, `timeline (${calls.length} model calls)`), timeline(withCalls, flatten(trees), index), h('h2', {}, 'calls'), callsTable(withCalls, index));
  } else callsSection.replaceChildren(h('p', { class: 'muted' }, sample.capture ? 'the capture holds no calls' : 'no capture (collect with --capture-calls to record every model call)'));
  if (sample.has.dialogue) dialogue.append(h('h2', {}, 'dialogue'), dialogueView(await get(`sample/${index}/dialogue`)));
}

const callLink = (index: number, id: string | null | undefined): Child => (id && id !== 'unknown' ? h('a', { href: link(['sample', index, 'call', id]), class: 'mono' }, id) : id ?? '–');

function callsTable(sample: Json, index: number): HTMLElement {
  const PAGE = 200;
  const wrap = h('div');
  const show = (offset: number) => {
    const rows = sample.calls.slice(offset, offset + PAGE);
    wrap.replaceChildren(
      sample.calls.length > PAGE ? h('div', { class: 'toolbar' }, h('button', { disabled: offset === 0, onclick: () => show(offset - PAGE) }, '‹ prev'), `${offset + 1}–${offset + rows.length} of ${sample.calls.length}`, h('button', { disabled: offset + PAGE >= sample.calls.length, onclick: () => show(offset + PAGE) }, 'next ›')) : '',
      h('table', { id: 'calls' },
        h('thead', {}, h('tr', {}, ...['seq', 'call', 'participant', 'model', 'tokens', 'TTFB', 'total', 'tool calls', 'statuses'].map((t) => h('th', {}, t)))),
        h('tbody', {}, ...rows.map((c: Json) => h('tr', {},
          h('td', { class: 'num' }, c.seq), h('td', {}, callLink(index, c.call_id)), h('td', { class: 'mono' }, c.participant_id ?? 'unattributed'), h('td', {}, c.model ?? '–'),
          h('td', { class: 'tokens' }, c.usage ? tokensText(c.usage) : '–'),
          h('td', { class: 'num' }, ms(c.first_byte_at ? Date.parse(c.first_byte_at) - Date.parse(c.started_at) : null)),
          h('td', { class: 'num' }, ms(c.ended_at ? Date.parse(c.ended_at) - Date.parse(c.started_at) : null)),
          h('td', { class: 'mono' }, c.tool_refs.map((t: Json) => t.name).join(', ')),
          h('td', {}, ...Object.entries(c.statuses).map(([k, v]) => h('span', { class: `pill status-${v}`, title: c.status_reasons[k] ?? k }, String(v)))),
        )))));
  };
  show(0);
  return wrap;
}

/** One lane per participant, a bar per call, ticks for tool calls, arrows from relations (spawn, result into a later input). */
function timeline(sample: Json, participants: Json[], index: number): HTMLElement {
  const calls: Json[] = sample.calls;
  const lanes = participants.map((p) => p.participant as string);
  if (calls.some((c) => c.participant_id === null || !lanes.includes(c.participant_id))) lanes.push('(unattributed)');
  const laneOf = (c: Json) => { const i = lanes.indexOf(c.participant_id); return i === -1 ? lanes.length - 1 : i; };
  const t0 = Math.min(...calls.map((c) => Date.parse(c.started_at)));
  const t1 = Math.max(...calls.map((c) => Date.parse(c.ended_at ?? c.first_byte_at ?? c.started_at)));
  const span = Math.max(1, t1 - t0);
  const labelW = 230, laneH = 26, width = Math.max(main.clientWidth - 36, 600, Math.min(6000, calls.length * 6)), plotW = width - labelW - 20;
  const x = (t: number) => labelW + ((t - t0) / span) * plotW;
  const end = (c: Json) => Date.parse(c.ended_at ?? c.first_byte_at ?? c.started_at);
  const height = lanes.length * laneH + 30;
  const svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, id: 'timeline-svg' });
  svg.append(s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' }, s('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: 'currentColor' }))));
  lanes.forEach((l, i) => svg.append(s('text', { x: 4, y: i * laneH + 17, class: 'lane-label' }, l.length > 34 ? `${l.slice(0, 33)}…` : l)));
  for (const c of calls) {
    const y = laneOf(c) * laneH + 6;
    const x0 = x(Date.parse(c.started_at));
    const bad = c.statuses.execution_status !== 'completed' || c.statuses.capture_status !== 'complete';
    const a = s('a', { href: link(['sample', index, 'call', c.call_id]), 'data-call': c.call_id });
    a.append(s('rect', { x: x0, y, width: Math.max(2, x(end(c)) - x0), height: laneH - 10, rx: 2, class: `call${bad ? ' bad' : ''}` }));
    for (const t of c.tool_refs) a.append(s('line', { x1: x(end(c)), x2: x(end(c)), y1: y - 3, y2: y + laneH - 7, class: 'tick', 'data-tool': `${t.name} ${t.id}` }));
    svg.append(a);
  }
  // Tooltips made on first hover: 2,000 bars with a <title> each cost a quarter of a second up front.
  const byCall = new Map(calls.map((c) => [c.call_id, c]));
  svg.addEventListener('mouseover', (e) => {
    const el = e.target as SVGElement;
    if (el.firstChild || !(el instanceof SVGRectElement || el instanceof SVGLineElement)) return;
    const c = byCall.get((el.parentNode as SVGElement).dataset.call ?? '');
    if (!c) return;
    el.append(s('title', {}, el.dataset.tool ?? `#${c.seq} ${c.call_id}\n${c.model ?? ''}\n${c.usage ? tokensText(c.usage) : ''}\n${ms(end(c) - Date.parse(c.started_at))}`));
  });
  const byId = byCall;
  const firstOf = (pid: string) => calls.filter((c) => c.participant_id === pid).sort((a, b) => a.seq - b.seq)[0];
  const lastOf = (pid: string) => calls.filter((c) => c.participant_id === pid).sort((a, b) => b.seq - a.seq)[0];
  for (const r of sample.relations as Json[]) {
    let from: Json, to: Json, cls: string;
    if (r.type === 'spawn') { from = byId.get(r.parent_call_id); to = firstOf(r.child_participant_id); cls = 'spawn'; }
    else if (r.type === 'result_in_context' || r.type === 'launch_ack_in_context') { from = lastOf(r.child_participant_id); to = byId.get(r.in_call_id); cls = 'delivery'; }
    else continue;
    if (!from || !to) continue;
    svg.append(s('line', { x1: x(end(from)), y1: laneOf(from) * laneH + laneH / 2, x2: x(Date.parse(to.started_at)), y2: laneOf(to) * laneH + laneH / 2, class: `rel ${cls}`, 'marker-end': 'url(#arrow)', 'data-relation': r.relation_id }, s('title', {}, `${r.type}: ${r.child_participant_id} (${r.status})`)));
  }
  for (let i = 0; i <= 4; i++) svg.append(s('text', { x: labelW + (plotW * i) / 4, y: height - 6, class: 'axis' }, ms(Math.round((span * i) / 4))));
  return h('div', { class: 'timeline', id: 'timeline' }, svg);
}

/** conversation.json (roller.conversation/v1): the turns by who said them, and why the dialogue ended. */
function dialogueView(d: Json): HTMLElement {
  const turns: Json[] = Array.isArray(d?.turns) ? d.turns : [];
  if (turns.length === 0) return h('details', { id: 'dialogue' }, h('summary', {}, 'conversation.json'), h('pre', {}, JSON.stringify(d, null, 1)));
  const t = d.termination;
  return h('div', { id: 'dialogue' },
    h('p', { class: 'muted' }, `${turns.length} messages · ${Object.entries(d.models ?? {}).map(([k, v]) => `${k}: ${v}`).join(' · ')}${t ? ` · ended: ${t.reason}${t.after_turn ? ` after turn ${t.after_turn}` : ''}${t.detail ? ` (${t.detail})` : ''}` : ''}`),
    ...turns.map((x) => h('div', { class: 'turn' }, h('div', { class: 'role' }, `${x.turn ?? ''}. ${x.role}${x.source ? ` (${x.source})` : ''}`), h('div', { class: 'part' }, longText(typeof x.text === 'string' ? x.text : JSON.stringify(x, null, 1))))));
}

// ---- call page ----

function partView(p: Json): HTMLElement {
  const body =
    p.kind === 'text' ? longText(p.text)
    : p.kind === 'reasoning' ? (p.redacted && !p.text ? h('span', { class: 'muted' }, '(encrypted)') : longText(p.text))
    : p.kind === 'tool_call' ? h('div', {}, h('b', {}, p.name), ' ', h('span', { class: 'mono' }, p.id), longText(p.input, 2000))
    : p.kind === 'tool_result' ? h('div', {}, h('span', { class: 'mono' }, `for ${p.id}`), p.error ? pill('error', 'status-error') : null, longText(p.text, 2000))
    : p.kind === 'image' ? h('span', { class: 'muted' }, `image (${p.media})`)
    : p.kind === 'encrypted' ? h('span', { class: 'muted' }, `encrypted content (${fmt(p.chars)} characters)`)
    : h('details', {}, h('summary', {}, p.type), h('pre', {}, p.json));
  return h('div', { class: `part part-${p.kind}` }, h('div', { class: 'kind' }, p.kind.replace('_', ' ')), body);
}

const turnView = (t: Json, extra = ''): HTMLElement => h('div', { class: `turn ${extra}` }, h('div', { class: 'role' }, t.role), ...t.parts.map(partView));

async function callPage(page: HTMLElement, run: Json, index: number, callId: string): Promise<void> {
  const d = await get(`sample/${index}/call/${callId}`);
  const c = d.call;
  setCrumbs(run, [`sample ${index}`, link(['sample', index])], [`call #${c.seq}`, null]);
  const reasons = c.status_reasons ?? {};
  const req = d.request;
  const rel = (r: Json, dir: 'out' | 'in') => h('li', {}, h('b', {}, r.type), ' ', statusEl(r.status), ' ', h('span', { class: 'mono' }, r.child_participant_id ?? ''), r.tool_call_id ? ` (tool call ${r.tool_call_id})` : '',
    dir === 'out' && r.in_call_id ? [' → entered ', callLink(index, r.in_call_id)] : null,
    dir === 'in' && r.parent_call_id ? [' ← from ', callLink(index, r.parent_call_id)] : null);
  const entered = d.relations.out.filter((r: Json) => r.in_call_id);
  page.append(
    h('h1', {}, `call #${c.seq} `, h('span', { class: 'mono' }, c.call_id)),
    h('div', { class: 'toolbar' }, d.neighbours.prev ? h('a', { href: link(['sample', index, 'call', d.neighbours.prev]) }, '‹ previous call of this agent') : null, d.neighbours.next ? h('a', { href: link(['sample', index, 'call', d.neighbours.next]) }, 'next call of this agent ›') : null),
    h('dl', { class: 'kv', id: 'call-facts' },
      h('dt', {}, 'participant'), h('dd', { class: 'mono' }, c.participant_id ?? 'unattributed'),
      h('dt', {}, 'model'), h('dd', {}, `${c.request_model ?? '–'} → ${c.response_model ?? '–'}`),
      h('dt', {}, 'protocol'), h('dd', {}, `${c.protocol} · ${c.method} ${c.path} · HTTP ${c.http_status ?? '–'}`),
      h('dt', {}, 'latency'), h('dd', {}, `TTFB ${ms(d.latency.ttfb_ms)} · total ${ms(d.latency.total_ms)} · started ${c.started_at}`),
      h('dt', {}, 'usage'), h('dd', { class: 'tokens', id: 'call-tokens' }, c.usage?.normalized ? tokensText(c.usage.normalized) : 'not reported'),
      h('dt', {}, 'statuses'), h('dd', {}, ...['execution_status', 'response_capture_status', 'identity_status', 'capture_status', 'export_status'].map((k) => h('div', {}, `${k.replace('_status', '')}: `, statusEl(c[k]), reasons[k] ? h('span', { class: 'muted' }, ` — ${reasons[k]}`) : null))),
      c.errors?.length ? [h('dt', {}, 'errors'), h('dd', {}, ...c.errors.map((e: Json) => h('div', { class: 'error-box' }, `${e.code ?? ''} ${e.message}`)))] : null,
      h('dt', {}, 'request'), h('dd', {}, `${fmt(d.request_bytes)} bytes on line ${d.line} of calls.jsonl`),
    ),
    h('h2', {}, 'relations'),
    d.relations.out.length || d.relations.in.length
      ? h('div', { id: 'call-relations' },
        entered.length ? h('p', { id: 'entered' }, 'this call\u2019s tool results entered ', ...entered.flatMap((r: Json, i: number) => [i ? ', ' : '', callLink(index, r.in_call_id)])) : null,
        d.relations.out.length ? h('h3', {}, 'from this call') : null, h('ul', {}, ...d.relations.out.map((r: Json) => rel(r, 'out'))),
        d.relations.in.length ? h('h3', {}, 'into this call\u2019s input') : null, h('ul', {}, ...d.relations.in.map((r: Json) => rel(r, 'in'))))
      : h('p', { class: 'muted' }, 'none name this call'),
    h('div', { class: 'cols' },
      h('section', { id: 'request' }, h('h2', {}, 'request (as the model saw it)'),
        req.system.length ? h('details', {}, h('summary', {}, `system (${fmt(req.system.join('').length)} characters)`), ...req.system.map((t: string) => longText(t))) : null,
        h('details', {}, h('summary', {}, `tools (${req.tools.length})`), h('ul', {}, ...req.tools.map((t: Json) => h('li', {}, h('b', {}, t.name), ' ', h('span', { class: 'muted' }, t.description.slice(0, 200)))))),
        h('details', {}, h('summary', {}, 'parameters'), h('pre', {}, JSON.stringify(req.params, null, 1))),
        h('h3', {}, `messages (${req.turns.length})`), ...req.turns.map((t: Json) => turnView(t))),
      h('section', { id: 'response' }, h('h2', {}, `response${d.response.stop_reason ? ` (${d.response.stop_reason})` : ''}`),
        d.response.parts.length ? turnView({ role: 'assistant', parts: d.response.parts }) : h('p', { class: 'muted' }, 'no response body'),
        c.usage?.reported ? h('details', {}, h('summary', {}, 'usage as reported'), h('pre', {}, JSON.stringify(c.usage.reported, null, 1))) : null),
    ),
  );
}

// ---- trajectory page ----

async function trajectoryPage(page: HTMLElement, run: Json, index: number, query: URLSearchParams): Promise<void> {
  const sample = await get(`sample/${index}`);
  setCrumbs(run, [`sample ${index}`, link(['sample', index])], ['trajectory', null]);
  const per = run.trajectory_page as number;
  const actfOffset = Number(query.get('a') ?? 0);
  const right = query.get('view') ?? 'sft';
  const rightOffset = Number(query.get('b') ?? 0);
  const go = (patch: Record<string, string | number>) => { location.hash = link(['sample', index, 'trajectory'], { a: actfOffset, view: right, b: rightOffset, ...patch }); };
  const pager = (p: Json, offset: number, key: string) => h('div', { class: 'toolbar' },
    h('button', { disabled: offset === 0, onclick: () => go({ [key]: offset - per }) }, '‹'),
    `${offset + 1}–${offset + p.items.length}${p.total !== null ? ` of ${p.total}` : p.more ? ' of more' : ''}`,
    h('button', { disabled: !p.more, onclick: () => go({ [key]: offset + per }) }, '›'));
  const left = h('section', { id: 'actf' }, h('h2', {}, 'ACTF steps'));
  if (sample.has.actf) {
    const p = await get(`sample/${index}/actf/${actfOffset}`);
    if (actfOffset === 0 && p.head?.system_prompt) left.append(h('details', {}, h('summary', {}, `system prompt (${fmt(String(p.head.system_prompt).length)} characters)`), longText(String(p.head.system_prompt))));
    if (actfOffset === 0 && Array.isArray(p.head?.tools)) left.append(h('details', {}, h('summary', {}, `tools (${p.head.tools.length})`), h('ul', {}, ...p.head.tools.map((t: Json) => h('li', {}, t.function?.name ?? t.name ?? t.type)))));
    left.append(pager(p, actfOffset, 'a'), ...p.items.map((st: Json) => h('div', { class: 'turn' }, h('div', { class: 'role' }, `step ${st.step_id}`),
      st.user_content ? h('div', { class: 'part' }, h('div', { class: 'kind' }, 'user'), longText(typeof st.user_content === 'string' ? st.user_content : JSON.stringify(st.user_content, null, 1))) : null,
      st.assistant_content?.reasoning_content ? h('div', { class: 'part' }, h('div', { class: 'kind' }, 'reasoning'), longText(st.assistant_content.reasoning_content)) : null,
      st.assistant_content?.content ? h('div', { class: 'part' }, h('div', { class: 'kind' }, 'assistant'), longText(String(st.assistant_content.content))) : null,
      ...(st.assistant_content?.tool_calls ?? []).map((t: Json) => h('div', { class: 'part' }, h('div', { class: 'kind' }, 'tool call'), h('b', {}, t.name), ' ', h('span', { class: 'mono' }, t.id), longText(typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments, null, 1), 2000))),
      ...(st.observation ?? []).map((r: Json) => h('div', { class: 'part' }, h('div', { class: 'kind' }, `tool result${r.isError ? ' (error)' : ''}`), h('span', { class: 'mono' }, r.toolCallId ?? ''), longText(typeof r.content === 'string' ? r.content : JSON.stringify(r.content, null, 1), 2000))),
    )));
  } else left.append(h('p', { class: 'muted' }, 'no trace_ACTF.json'));

  const choices: [string, string][] = [...(sample.has.sft ? [['sft', 'trace_SFT.json (linear)'] as [string, string]] : []), ...sample.has.segments.map((g: Json) => [`segment-${g.order}`, `segment ${g.order} (${g.boundary_source})`] as [string, string])];
  const rightEl = h('section', { id: 'sft' }, h('h2', {}, 'what training sees'),
    choices.length > 1 ? h('select', { id: 'sft-choice', onchange: (e) => go({ view: (e.target as HTMLSelectElement).value, b: 0 }) }, ...choices.map(([v, label]) => h('option', { value: v, selected: v === right }, label))) : null);
  const key = right.startsWith('segment-') ? `sample/${index}/segment/${right.slice('segment-'.length)}/${rightOffset}` : sample.has.sft ? `sample/${index}/sft/${rightOffset}` : null;
  if (key) {
    const p = await get(key);
    const start: number | null = typeof p.head?.target_start_index === 'number' ? p.head.target_start_index : null;
    rightEl.append(
      h('p', { class: 'muted' }, start === null ? 'every assistant message is a target (highlighted)' : `a compaction segment: messages before ${start} are context; assistant messages from ${start} on are targets (highlighted)`),
      pager(p, rightOffset, 'b'),
      ...p.items.map((m: Json, i: number) => {
        const at = rightOffset + i;
        const target = m.role === 'assistant' && (start === null || at >= start);
        const parts: Json[] = [];
        if (m.reasoning_content) parts.push({ kind: 'reasoning', text: m.reasoning_content });
        if (m.content) parts.push(m.role === 'tool' ? { kind: 'tool_result', id: m.tool_call_id, text: m.content } : { kind: 'text', text: m.content });
        for (const t of m.tool_calls ?? []) parts.push({ kind: 'tool_call', id: t.id, name: t.function.name, input: typeof t.function.arguments === 'string' ? t.function.arguments : JSON.stringify(t.function.arguments, null, 1) });
        if (m.role === 'system') return h('details', { class: 'turn' }, h('summary', { class: 'role' }, `${at}. system (${fmt(String(m.content).length)} characters)`), longText(String(m.content)));
        const el = turnView({ role: `${at}. ${m.role}${target ? ' — target' : ''}`, parts }, target ? 'target' : '');
        el.dataset.target = String(target);
        return el;
      }));
  } else rightEl.append(h('p', { class: 'muted' }, 'no SFT record: ' + (sample.info.runtime.sft_eligibility?.reason ?? 'none written')));
  page.append(h('h1', {}, `trajectory of sample ${index} (${sample.info.task_id})`), h('div', { class: 'cols' }, left, rightEl));
}

window.addEventListener('hashchange', () => void render());
statusLine.textContent = STATIC ? 'static export' : 'live from the run directory (read-only)';
void render();
