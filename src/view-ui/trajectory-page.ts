/* The trajectory page: ACTF steps beside what training sees (the SFT record or a segment, targets marked). */
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
