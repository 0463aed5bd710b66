import { readFile } from 'node:fs/promises';
import type { AdminDecision, AdminDecisions } from '../contract/index.js';
import { ErrorCodes, RouterctlError, usageError } from '../errors/index.js';
import { createAgent, getText, normalizeRouterUrl, unauthorized } from '../fleet/index.js';
import { diagnose, formatDiagnosis } from './diagnose.js';

export interface DoctorOptions {
  /** A live router: its decision ring. */
  url: string | undefined;
  /** Or a file of records: `routerctl explain --once --json` lines, or a saved /admin/decisions document. */
  file: string | undefined;
  token: string | undefined;
  json: boolean;
  out?: NodeJS.WritableStream;
}

/**
 * `routerctl doctor` (docs/decisions.md §routerctl doctor): where the cached tokens
 * went, from a router's decision ring or a file of its records.
 */
export async function runDoctor(o: DoctorOptions): Promise<void> {
  const records = o.file !== undefined ? await readRecords(o.file) : await fetchRecords(o.url ?? 'http://127.0.0.1:30000', o.token);
  const d = diagnose(records);
  (o.out ?? process.stdout).write(o.json ? `${JSON.stringify(d)}\n` : `${formatDiagnosis(d).join('\n')}\n`);
}

async function fetchRecords(url: string, token: string | undefined): Promise<AdminDecision[]> {
  const base = normalizeRouterUrl(url);
  const agent = createAgent();
  try {
    const r = await getText(`${base}/admin/decisions?limit=10000`, { dispatcher: agent, token });
    if (r.status === 401) throw unauthorized(base, token !== undefined);
    if (r.status !== 200)
      throw new RouterctlError(
        ErrorCodes.NOT_A_ROUTER,
        `the router at ${base} has no /admin/decisions (${r.status}): doctor needs routerctl serve with --decision-log-size above 0`,
      );
    return (JSON.parse(r.text) as AdminDecisions).decisions;
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/** A saved /admin/decisions document, or one record per line; a line that is not a record is an error naming it. */
async function readRecords(file: string): Promise<AdminDecision[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('{') && !trimmed.includes('\n')) {
    const doc = parse(trimmed, file, 1) as Partial<AdminDecisions> & Partial<AdminDecision>;
    if (Array.isArray(doc.decisions)) return doc.decisions;
    return [checked(doc, file, 1)];
  }
  if (trimmed.startsWith('{') && trimmed.includes('"decisions"')) {
    try {
      const doc = JSON.parse(trimmed) as Partial<AdminDecisions>;
      if (Array.isArray(doc.decisions)) return doc.decisions;
    } catch {
      // Not one document: records, one per line.
    }
  }
  return trimmed === '' ? [] : trimmed.split('\n').map((line, i) => checked(parse(line, file, i + 1), file, i + 1));
}

function parse(line: string, file: string, n: number): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw usageError(`${file}:${n} is not JSON; give routerctl explain --once --json output or a saved /admin/decisions document`);
  }
}

function checked(v: unknown, file: string, n: number): AdminDecision {
  const r = v as Partial<AdminDecision>;
  if (typeof r?.input_tokens !== 'number' || typeof r.query_blocks !== 'number' || typeof r.worker !== 'string') {
    throw usageError(`${file}:${n} is not a decision record (it has no input_tokens, query_blocks and worker)`);
  }
  return r as AdminDecision;
}
