/**
 * Credentials given to the proxy every way a client or a user can give them — headers in any case and repeated, query
 * parameters, request trailers, response headers, the upstream URL's userinfo and query — are forwarded where they
 * belong and never written: every byte the proxy wrote (its capture directory, stdout, stderr) is searched.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { startUpstream } from '../support/http.js';
import { rollerBin } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy-secrets');
const SECRETS = {
  bearer: 'SECRETbearer0001',
  apiKey: 'SECRETapikey0002',
  apiKey2: 'SECRETapikey0003',
  cookie: 'SECRETcookie0004',
  proxyAuth: 'SECRETproxyauth0005',
  goog: 'SECRETgoog0006',
  queryKey: 'SECRETquerykey0007',
  queryToken: 'SECRETquerytoken0008',
  querySig: 'SECRETquerysig0009',
  trailer: 'SECRETtrailer0010',
  setCookie: 'SECRETsetcookie0011',
  responseKey: 'SECRETresponsekey0012',
  upstreamPassword: 'SECRETupstreampw0013',
  upstreamQuery: 'SECRETupstreamq0014',
};

describe('secrets', () => {
  it('are forwarded where they belong and appear in no byte the proxy writes', async () => {
    const received: { url: string; headers: Record<string, unknown>; trailers: Record<string, unknown> }[] = [];
    const up = await startUpstream((req, res) => {
      received.push({ url: req.url ?? '', headers: req.headers, trailers: req.trailers });
      res.writeHead(200, [['content-type', 'text/event-stream'], ['set-cookie', `s=${SECRETS.setCookie}`], ['X-Api-Key', SECRETS.responseKey], ['x-plain', 'kept']].flat());
      // A careless upstream echoes what it was given: the query key JSON-escaped, the bearer in base64, a piece of the other.
      const escaped = [...SECRETS.queryKey].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
      res.end(`event: ping\ndata: {"echo":"${escaped}","b64":"${Buffer.from(`Bearer ${SECRETS.bearer}`).toString('base64')}","piece":"${SECRETS.queryToken.slice(2, 15)}"}\n\n`);
    });
    const out = join(tmp.path, 'capture');
    const upstream = `http://user:${SECRETS.upstreamPassword}@127.0.0.1:${new URL(up.url).port}/base?api_key=${SECRETS.upstreamQuery}`;
    const child = spawn(rollerBin, ['proxy', '--upstream', upstream, '--out', out, '--wire-trace', 'full'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('latin1')));
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (l) => (stdout += `${l}\n`));
    const [url] = (await once(lines, 'line')) as [string];
    const port = Number(new URL(url).port);

    const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const headers = [
      `Authorization: Bearer ${SECRETS.bearer}`,
      `x-API-key: ${SECRETS.apiKey}`,
      `X-Api-Key: ${SECRETS.apiKey2}`, // repeated, another case
      `COOKIE: a=${SECRETS.cookie}`,
      `Proxy-Authorization: Basic ${SECRETS.proxyAuth}`,
      `x-goog-api-key: ${SECRETS.goog}`,
    ];
    const path = `/v1/messages?beta=true&key=${SECRETS.queryKey}&access_token=${SECRETS.queryToken}&X-Amz-Signature=${SECRETS.querySig}`;
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\nAuthorization: Bearer ${SECRETS.trailer}\r\n\r\n`;
    for (const request of [
      `POST ${path} HTTP/1.1\r\nhost: x\r\n${headers.join('\r\n')}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      `POST ${path} HTTP/1.1\r\nhost: x\r\n${headers.join('\r\n')}\r\ntransfer-encoding: chunked\r\ntrailer: Authorization\r\nconnection: close\r\n\r\n${chunked}`,
    ]) {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      let reply = '';
      socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
      socket.write(request); // not end(): a client's FIN is a hang-up, which aborts its call
      await once(socket, 'close');
      expect(reply).toMatch(/^HTTP\/1\.1 200 /);
      expect(reply).toContain(SECRETS.setCookie); // the client gets its response headers
      // ...and the body's echoes masked, at their length.
      expect(reply).toMatch(/"echo":"REDACTED\*{100}","b64":"[^"]*REDACTED[^"]*","piece":"REDACTED\*{5}"/);
    }
    child.kill('SIGTERM');
    expect(((await once(child, 'close')) as [number])[0]).toBe(0);
    await up.close();

    // Forwarded: the client's credentials, the upstream's own query, and (the client sending its own) no Basic ones.
    expect(received).toHaveLength(2);
    for (const r of received) {
      expect(r.headers.authorization).toBe(`Bearer ${SECRETS.bearer}`);
      expect(r.headers['x-api-key']).toBe(`${SECRETS.apiKey}, ${SECRETS.apiKey2}`);
      expect(r.url).toBe(`/base${path}&api_key=${SECRETS.upstreamQuery}`);
    }
    let written = `${stdout}\n${stderr}\n`;
    for (const entry of await readdir(out, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) written += await readFile(join(entry.parentPath, entry.name), 'latin1');
    }
    expect(written).toContain('x-plain'); // the scan reads what was recorded
    expect(written).toContain('beta=true');
    for (const [name, secret] of Object.entries(SECRETS)) expect([name, written.includes(secret)]).toEqual([name, false]);
    // Nor any 12-character piece of one, in any spelling a JSON reader would decode.
    const decoded = written.replace(/\\u([0-9a-f]{4})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    for (const [name, secret] of Object.entries(SECRETS)) expect([name, decoded.includes(secret.slice(3, 15))]).toEqual([name, false]);
    expect(Buffer.from(written.match(/"b64":"([^"]*)"/)?.[1] ?? '', 'base64').toString('latin1')).not.toContain(SECRETS.bearer.slice(0, 12));
  });
});
