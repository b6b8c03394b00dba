import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { VIEW_CSS } from './style.js';

/** The page's files: the HTML shell, its stylesheet, and the UI script (src/view-ui, compiled to a classic script). */
export async function viewAssets(mode: 'server' | 'static'): Promise<Record<'index.html' | 'style.css' | 'app.js', string>> {
  const appPath = fileURLToPath(new URL('../../view-ui/app.js', import.meta.url));
  const app = await readFile(appPath, 'utf8').catch(() => {
    throw new Error(`${appPath} is missing: build roller (npm run build) — the view's page script is compiled with it`);
  });
  return { 'index.html': pageHtml(mode), 'style.css': VIEW_CSS, 'app.js': app };
}

/** The static export's policy (no server sends headers for it): its own files only; nothing from elsewhere, no inline script. */
const STATIC_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'";

/** Classic scripts only: a module script does not load from file:// (the static export opens from disk). */
function pageHtml(mode: 'server' | 'static'): string {
  return `<!doctype html>
<html lang="en" data-mode="${mode}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${mode === 'static' ? `<meta http-equiv="Content-Security-Policy" content="${STATIC_CSP}">\n` : ''}<title>roller view</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="style.css">
</head>
<body>
<header id="top"><a href="#/" class="brand">roller view</a><nav id="crumbs"></nav><span id="status"></span></header>
<main id="main"><p class="muted">loading…</p></main>
<script src="app.js"></script>
</body>
</html>
`;
}
