/**
 * A trace with the published statistics of Mooncake's conversation trace (12,031
 * requests, mean input 12,035 tokens, mean output 343; the file itself is not
 * shipped), made here by conversationTrace, replayed on the virtual clock through
 * round_robin, cache_aware, and the queue gate at three limits, on 8 simulated
 * engines at an arrival rate that saturates them. Prints `routerctl bench`'s own
 * report.
 *
 *   npm run perf -- trace-conversations [--rate 3] [--requests 12031]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { conversationTrace, toMooncakeJsonl } from '../src/workload/index.js';
import { ROUTERCTL_BIN } from './support/processes.js';
import { benchArg } from './support/args.js';

const requests = Number(benchArg('requests', '12031'));
const rate = Number(benchArg('rate', '3'));
const limits = benchArg('limits', '2,4,8');
const trace = conversationTrace({
  requests,
  rate,
  blockSize: 512,
  apps: 8,
  systemTokens: 4096,
  sessions: 400,
  turnTokens: 2000,
  outputTokens: 343,
  maxContextTokens: 19_000,
  seed: 1,
});
const meanIn = trace.reduce((a, r) => a + r.inputLength, 0) / trace.length;
const meanOut = trace.reduce((a, r) => a + r.outputLength, 0) / trace.length;
const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-conversations-'));
const file = path.join(dir, 'conversations.jsonl');
writeFileSync(file, toMooncakeJsonl(trace));
try {
  const args = [
    'bench',
    '--trace',
    file,
    '--clock',
    'virtual',
    '--sim-workers',
    '8',
    '--sim-kv-blocks',
    '16384',
    '--sim-max-running',
    '16',
    '--compare',
    '--policy round_robin',
    '',
    '--sweep',
    `worker-queue-limit=${limits}`,
  ];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [ROUTERCTL_BIN, ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`routerctl bench exited ${r.status}: ${r.stderr}`);
  console.log(
    `node ${process.version}; ${trace.length.toLocaleString('en')} requests at ${rate}/s, mean input ${Math.round(meanIn).toLocaleString('en')} tokens, mean output ${Math.round(meanOut)}; 8 engines of 16,384 KV blocks (16 tokens), 16 running; ${wall.toFixed(1)} s in all`,
  );
  console.log('');
  console.log(r.stdout.trim());
} finally {
  rmSync(dir, { recursive: true, force: true });
}
