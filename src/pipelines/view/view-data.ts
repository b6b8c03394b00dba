import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { readArrayPage } from '../../core/json-array-page.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { Lock } from '../../schemas/lock.js';
import { RunInfo, SampleInfo } from '../../schemas/run-info.js';
import { readableRequest, readableResponse } from '../../transforms/protocols/readable.js';
import { locate } from '../locate.js';
import { readChecked } from '../run-reader.js';
import { SAMPLE_FILE } from '../sample-layout.js';
import { indexCalls, readCallAt, type CallSummary } from './calls-index.js';
import { RunTable, type TableQuery } from './run-table.js';

type Json = Record<string, any>;

/** Steps or messages per trajectory page (the static export writes pages of this size). */
export const TRAJECTORY_PAGE = 50;
/** Samples per run-table page in the browser. */
export const TABLE_PAGE = 100;

interface SampleCache {
  dir: string;
  info: SampleInfo;
  capture: string | null;
  /** The calls index, built when first asked for (a 2 GB calls.jsonl is read once, at disk speed). */
  calls(): Promise<{ list: CallSummary[]; byId: Map<string, CallSummary> }>;
  callsBytes: number;
  relations: Json[];
  manifest: Json | null;
}

/**
 * What `roller view` shows, read from a run's files and never written: the run table, each sample's agent tree,
 * calls, relations and trajectories, one call whole. Every answer is one JSON value for one API path — the server
 * serves them, the static export writes them. Samples' call indexes are kept for the few last opened (bounded).
 */
export class ViewData {
  table!: RunTable;
  info!: RunInfo;
  private samples = new Map<number, Promise<SampleCache>>();
  /** info.json's mtime and size when read: a run still being collected is read again when it changes. */
  private infoStamp = '';

  private constructor(
    readonly runDir: string,
    info: RunInfo,
    stamp: string,
    readonly lock: Lock | null,
    /** The sample a SAMPLE_DIR argument named: the view shows only it. */
    readonly only: number | null,
  ) {
    this.use(info, stamp);
  }

  private use(info: RunInfo, stamp: string): void {
    this.info = info;
    this.infoStamp = stamp;
    this.table = new RunTable(this.runDir, this.only === null ? info : { ...info, samples: info.samples.filter((s) => s.index === this.only) });
    this.samples.clear();
  }

  /**
   * Reads the run's info.json again when it changed (a collect still running, a resume): the run page of a live run
   * is current on reload. A half-written file cannot be seen (roller replaces info.json atomically).
   */
  async refresh(): Promise<void> {
    const path = join(this.runDir, SAMPLE_FILE.info);
    const st = await stat(path);
    if (stampOf(st) === this.infoStamp) return;
    this.use(await readChecked(RunInfo, path, "run's info.json"), stampOf(st));
    void this.table.index();
  }

  static async open(given: string): Promise<ViewData> {
    const found = await locate(given);
    if (found.kind === 'capture') throw new RollerError(ErrorCode.INVALID_OPTIONS, `${given} is a capture directory: pass the run (<output>/<run-name>) or the sample it belongs to`);
    const infoPath = join(found.runDir, SAMPLE_FILE.info);
    const stamp = stampOf(await stat(infoPath));
    const info = await readChecked(RunInfo, infoPath, "run's info.json");
    const lock = existsSync(join(found.runDir, 'lock.json')) ? await readChecked(Lock, join(found.runDir, 'lock.json'), 'run lock.json') : null;
    let only: number | null = null;
    if (found.kind === 'sample') {
      const row = info.samples.find((s) => resolve(found.runDir, s.path) === found.sampleDir);
      if (!row) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${given}: the run's info.json lists no sample at ${found.path}`);
      only = row.index;
    }
    return new ViewData(found.runDir, info, stamp, lock, only);
  }

  run(): Json {
    const { samples: _samples, ...info } = this.info;
    return { dir: this.runDir, only: this.only, info, lock: this.lock ? { harness: this.lock.harness, created_at: this.lock.created_at } : null, page: TABLE_PAGE, trajectory_page: TRAJECTORY_PAGE };
  }

  samplesPage(q: Partial<TableQuery>): Json {
    void this.table.index();
    return this.table.query({ offset: q.offset ?? 0, limit: Math.min(q.limit ?? TABLE_PAGE, 1000), sort: q.sort ?? 'index', desc: q.desc ?? false, q: q.q ?? '', status: q.status ?? '' });
  }

  private row(index: number) {
    const row = this.table.rows.find((r) => r.index === index);
    if (!row) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no sample ${index} in this run`);
    return row;
  }

  /** A path the run's files name, kept inside the run directory (a damaged info.json cannot point elsewhere). */
  private inside(base: string, path: string): string {
    const full = resolve(base, path);
    const rel = relative(this.runDir, full);
    if (rel.startsWith(`..${sep}`) || rel === '..') throw new RollerError(ErrorCode.LINK_REFUSED, `${path}: outside the run directory ${this.runDir}`);
    return full;
  }

  private load(index: number): Promise<SampleCache> {
    let cached = this.samples.get(index);
    if (!cached) {
      cached = this.readSample(index);
      this.samples.set(index, cached);
      cached.catch(() => this.samples.delete(index));
      // The last few opened samples only: a 2,000-call sample's index is ~1 MB.
      while (this.samples.size > 8) this.samples.delete(this.samples.keys().next().value!);
    }
    return cached;
  }

  private async readSample(index: number): Promise<SampleCache> {
    const dir = this.inside(this.runDir, this.row(index).path);
    const info = await readChecked(SampleInfo, join(dir, SAMPLE_FILE.info), 'sample info.json');
    const capturePath = info.runtime.capture?.path ?? null;
    const capture = capturePath ? this.inside(dir, capturePath) : null;
    const has = (f: string) => capture !== null && existsSync(join(capture, f));
    const callsPath = has('calls.jsonl') ? join(capture!, 'calls.jsonl') : null;
    let indexed: Promise<{ list: CallSummary[]; byId: Map<string, CallSummary> }> | null = null;
    const calls = () =>
      (indexed ??= (callsPath ? indexCalls(callsPath) : Promise.resolve([] as CallSummary[])).then((list) => ({ list, byId: new Map(list.map((c) => [c.call_id, c])) })));
    const relations = has('relations.jsonl') ? (await readFile(join(capture!, 'relations.jsonl'), 'utf8')).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Json) : [];
    const manifest = has('manifest.json') ? (JSON.parse(await readFile(join(capture!, 'manifest.json'), 'utf8')) as Json) : null;
    return { dir, info, capture, calls, callsBytes: callsPath ? (await stat(callsPath)).size : 0, relations, manifest };
  }

  /** Every call's summary (sample/I/calls): the sample page's timeline and calls table, asked for after the rest. */
  async calls(index: number): Promise<Json> {
    const { list } = await (await this.load(index)).calls();
    return { calls: list.map(({ at: _at, ...c }) => c) };
  }

  /** The sample page: its info.json, the agent tree, the relations, and which files it has (its calls: calls()). */
  async sample(index: number): Promise<Json> {
    const s = await this.load(index);
    const manifestParticipants = ((s.manifest?.participants ?? []) as Json[]).map((p) => ({ participant_id: p.participant_id, call_ids: p.call_ids ?? [], model: p.model ?? null, spawn_result: p.spawn_result ?? null }));
    return {
      index,
      path: this.row(index).path,
      info: s.info,
      participants: s.info.runtime.participants ?? [],
      capture: s.manifest ? { path: s.info.runtime.capture?.path, status: s.manifest.capture_status ?? null, coverage: s.manifest.coverage ?? null, lifecycle: s.manifest.lifecycle?.status ?? null, participants: manifestParticipants, ...(s.manifest.token_continuity ? { token_continuity: s.manifest.token_continuity } : {}) } : null,
      calls_bytes: s.callsBytes,
      relations: s.relations,
      has: {
        actf: s.info.trajectory.actf !== null && existsSync(join(s.dir, s.info.trajectory.actf)),
        sft: s.info.trajectory.sft !== null && existsSync(join(s.dir, s.info.trajectory.sft)),
        segments: (s.info.trajectory.sft_segments ?? []).map((g) => ({ order: g.order, path: g.path, boundary_source: g.boundary_source, calls: g.call_ids.length })),
        dialogue: existsSync(join(s.dir, 'conversation.json')),
      },
    };
  }

  /** One call whole: the request as the model saw it, the response, usage, latency, statuses and the relations naming it. */
  async call(index: number, callId: string): Promise<Json> {
    const s = await this.load(index);
    const { list, byId } = await s.calls();
    const summary = byId.get(callId);
    if (!summary || !s.capture) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `sample ${index} has no call ${callId}`);
    const record = await readCallAt(join(s.capture, 'calls.jsonl'), summary.at);
    const { context, output, ...fields } = record as Json;
    const toolIds = new Set(summary.tool_refs.map((t) => t.id));
    const ms = (a: string | null, b: string | null) => (a && b ? Date.parse(b) - Date.parse(a) : null);
    return {
      index,
      call: fields,
      line: summary.at.line,
      request: readableRequest(summary.protocol, context),
      request_bytes: summary.at.length,
      response: readableResponse(summary.protocol, output),
      latency: { ttfb_ms: ms(summary.started_at, summary.first_byte_at), total_ms: ms(summary.started_at, summary.ended_at) },
      relations: {
        // made by this call (its tool calls spawned or launched them) / completed into it (their result is in its input)
        out: s.relations.filter((r) => r.parent_call_id === callId || (toolIds.has(r.tool_call_id) && r.in_call_id !== callId)),
        in: s.relations.filter((r) => r.in_call_id === callId),
      },
      neighbours: neighboursOf(list, summary),
    };
  }

  async actf(index: number, offset: number): Promise<Json> {
    const s = await this.load(index);
    if (!s.info.trajectory.actf) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `sample ${index} has no trace_ACTF.json`);
    return this.page(this.inside(s.dir, s.info.trajectory.actf), 'steps', offset);
  }

  async sft(index: number, offset: number): Promise<Json> {
    const s = await this.load(index);
    if (!s.info.trajectory.sft) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `sample ${index} has no trace_SFT.json`);
    return this.page(this.inside(s.dir, s.info.trajectory.sft), 'messages', offset);
  }

  async segment(index: number, order: number, offset: number): Promise<Json> {
    const s = await this.load(index);
    const seg = (s.info.trajectory.sft_segments ?? []).find((g) => g.order === order);
    if (!seg) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `sample ${index} has no SFT segment ${order}`);
    return { ...(await this.page(this.inside(s.dir, seg.path), 'messages', offset)), segment: seg };
  }

  async dialogue(index: number): Promise<Json> {
    const s = await this.load(index);
    const path = join(s.dir, 'conversation.json');
    if ((await stat(path)).size > 64 << 20) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${path} is over 64 MiB: open it with a JSON tool`);
    return JSON.parse(await readFile(path, 'utf8')) as Json;
  }

  /** Pages of trajectories: the length is known once a read reaches the end, and kept for the file as it is. */
  private totals = new Map<string, number>();
  private async page(path: string, key: string, offset: number): Promise<Json> {
    const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
      // A file info.json names but the sample no longer holds (removed, or a copy without it): the page says which.
      if (err.code === 'ENOENT') throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${relative(this.runDir, path)} is not there (the sample's info.json names it)`);
      throw err;
    });
    const id = `${path}:${st.size}:${st.mtimeMs}`;
    const page = await readArrayPage(path, key, offset, TRAJECTORY_PAGE);
    if (page.total !== null) this.totals.set(id, page.total);
    const items = page.items.map((item, i) => clipStrings(item, `${relative(this.runDir, path)}, ${key}[${offset + i}]`));
    return { offset, items, more: page.more, total: page.total ?? this.totals.get(id) ?? null, head: page.head, bytes: st.size };
  }
}

/** A trajectory page's strings past this many characters are cut (a page of 50 steps with 1 MB tool results each was 50 MB). */
export const CLIP_CHARS = 32 * 1024;

/** The value with each string longer than CLIP_CHARS cut there, saying how much more there is and where it is whole. */
export function clipStrings(value: unknown, where: string): unknown {
  if (typeof value === 'string') return value.length <= CLIP_CHARS ? value : `${value.slice(0, CLIP_CHARS)}\n… [${value.length - CLIP_CHARS} more characters: the whole text is in ${where}]`;
  if (Array.isArray(value)) return value.map((v) => clipStrings(v, where));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipStrings(v, where)]));
  return value;
}

const stampOf = (st: { mtimeMs: number; size: number }) => `${st.mtimeMs}:${st.size}`;

/** The same participant's previous and next calls (by seq), for stepping through a conversation. */
function neighboursOf(calls: CallSummary[], c: CallSummary): { prev: string | null; next: string | null } {
  const own = calls.filter((x) => x.participant_id === c.participant_id).sort((a, b) => a.seq - b.seq);
  const i = own.findIndex((x) => x.call_id === c.call_id);
  return { prev: own[i - 1]?.call_id ?? null, next: own[i + 1]?.call_id ?? null };
}
