/* The call page: the request as the model saw it beside the response, statuses, latency, relations. */
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
