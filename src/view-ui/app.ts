/*
 * roller view's page: classic scripts (a module does not load from file://), concatenated by tsconfig.ui.json's
 * outFile into one app.js in its `files` order (this file last: it starts the page); no dependencies, no markup built from
 * strings — every value from a run's files enters the page as text. Routes live in the hash (#/sample/2/call/ID),
 * so a link is shareable and the static export works from disk. Data comes from /api/KEY (server) or data/KEY.js
 * (static export), the same values either way.
 */

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

window.addEventListener('hashchange', () => void render());
statusLine.textContent = STATIC ? 'static export' : 'live from the run directory (read-only)';
void render();
