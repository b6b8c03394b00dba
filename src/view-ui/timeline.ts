/* The sample page's timeline: a lane per participant, a bar per call, tool-call ticks, relation arrows. */
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
