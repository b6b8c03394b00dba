/* The sample page: the agent tree first, then the timeline and calls once indexed, relations, audits, the dialogue. */
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
      info.runtime.capture?.token_continuity
        ? h('div', { class: 'card', id: 'token-continuity' }, 'token ids', h('b', {}, `${info.runtime.capture.token_continuity.continuous} of ${info.runtime.capture.token_continuity.checked} continued`), h('span', { class: 'muted' }, info.runtime.capture.token_continuity.breaks > 0 ? `${info.runtime.capture.token_continuity.breaks} broke: ${(sample.capture?.token_continuity?.breaks ?? []).map((b: Json) => `${b.call_id} at token ${b.at_token} (${b.reason})`).join('; ')}` : 'each prompt began with its agent\'s previous call'))
        : null,
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
function dialogueView(d: Json): HTMLElement {
  const turns: Json[] = Array.isArray(d?.turns) ? d.turns : [];
  if (turns.length === 0) return h('details', { id: 'dialogue' }, h('summary', {}, 'conversation.json'), h('pre', {}, JSON.stringify(d, null, 1)));
  const t = d.termination;
  return h('div', { id: 'dialogue' },
    h('p', { class: 'muted' }, `${turns.length} messages · ${Object.entries(d.models ?? {}).map(([k, v]) => `${k}: ${v}`).join(' · ')}${t ? ` · ended: ${t.reason}${t.after_turn ? ` after turn ${t.after_turn}` : ''}${t.detail ? ` (${t.detail})` : ''}` : ''}`),
    ...turns.map((x) => h('div', { class: 'turn' }, h('div', { class: 'role' }, `${x.turn ?? ''}. ${x.role}${x.source ? ` (${x.source})` : ''}`), h('div', { class: 'part' }, longText(typeof x.text === 'string' ? x.text : JSON.stringify(x, null, 1))))));
}
