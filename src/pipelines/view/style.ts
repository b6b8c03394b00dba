/** The view's stylesheet: system fonts only (nothing is fetched from elsewhere), light and dark by the OS setting. */
export const VIEW_CSS = `
:root { --bg: #fff; --fg: #1d2330; --muted: #6b7280; --line: #e3e6eb; --card: #f7f8fa; --accent: #2563eb; --ok: #15803d; --bad: #b91c1c; --warn: #b45309; --target: #fff4c2; --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
@media (prefers-color-scheme: dark) { :root { --bg: #14171c; --fg: #e6e8eb; --muted: #9aa3af; --line: #2b3038; --card: #1c2027; --accent: #60a5fa; --ok: #4ade80; --bad: #f87171; --warn: #fbbf24; --target: #3d3714; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
header#top { position: sticky; top: 0; z-index: 2; display: flex; gap: 12px; align-items: center; padding: 8px 16px; background: var(--card); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
#crumbs a, #crumbs span { margin-right: 6px; }
#crumbs a::after { content: " ›"; color: var(--muted); }
#status { margin-left: auto; color: var(--muted); font-size: 12px; }
main { padding: 12px 16px 48px; max-width: 1600px; }
a { color: var(--accent); }
h1 { font-size: 20px; margin: 4px 0 8px; } h2 { font-size: 16px; margin: 20px 0 8px; } h3 { font-size: 14px; margin: 12px 0 6px; }
.muted { color: var(--muted); }
.mono { font-family: var(--mono); font-size: 12px; }
.cards { display: flex; flex-wrap: wrap; gap: 8px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 140px; }
.card b { display: block; font-size: 16px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { position: sticky; top: 41px; background: var(--bg); font-weight: 600; white-space: nowrap; }
th.sortable { cursor: pointer; user-select: none; }
th.sorted::after { content: " ▲"; } th.sorted.desc::after { content: " ▼"; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:hover td { background: var(--card); }
.status-ok, .status-completed, .status-established, .status-passed, .status-complete { color: var(--ok); }
.status-error, .status-failed, .status-timeout, .status-missing, .status-aborted { color: var(--bad); }
.status-unknown, .status-running, .status-partial, .status-skipped { color: var(--warn); }
.toolbar { display: flex; gap: 8px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
input, select, button { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
button { cursor: pointer; } button:disabled { opacity: .5; cursor: default; }
ul.tree { list-style: none; padding-left: 18px; margin: 4px 0; } ul.tree.root { padding-left: 0; }
ul.tree li { margin: 4px 0; }
.participant { display: inline-block; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px; }
.participant .id { font-family: var(--mono); font-size: 12px; }
.tokens { font-variant-numeric: tabular-nums; }
.timeline { width: 100%; overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; background: var(--card); }
.timeline svg { display: block; }
.timeline .lane-label { font-size: 11px; fill: var(--muted); font-family: var(--mono); }
.timeline rect.call { fill: var(--accent); opacity: .8; } .timeline rect.call.bad { fill: var(--bad); }
.timeline a:hover rect.call { opacity: 1; stroke: var(--fg); }
.timeline line.tick { stroke: var(--warn); stroke-width: 2; }
.timeline line.rel { stroke-width: 1.5; fill: none; } .timeline line.rel.spawn { stroke: var(--ok); } .timeline line.rel.delivery { stroke: var(--warn); stroke-dasharray: 4 3; }
.timeline .axis { font-size: 10px; fill: var(--muted); }
.turn { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; background: var(--card); }
.turn > .role { font-weight: 600; padding: 4px 8px; border-bottom: 1px solid var(--line); }
.turn.target { background: var(--target); }
.part { padding: 6px 8px; border-top: 1px dashed var(--line); } .part:first-of-type { border-top: 0; }
.part .kind { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; font-family: var(--mono); font-size: 12px; }
details > summary { cursor: pointer; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; align-items: start; }
@media (max-width: 1000px) { .cols { grid-template-columns: 1fr; } }
.pill { display: inline-block; padding: 0 6px; border-radius: 9px; border: 1px solid var(--line); font-size: 12px; margin-right: 4px; }
.error-box { border: 1px solid var(--bad); color: var(--bad); padding: 8px 12px; border-radius: 6px; }
.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; } .kv dt { color: var(--muted); } .kv dd { margin: 0; }
`;
