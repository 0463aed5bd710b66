/**
 * The endpoint picker's cost (docs/endpoint-picker.md): its own decision time per
 * request, and the rate of Envoy with routerctl as its picker against `serve` in proxy
 * mode, on the same cheap upstreams (perf/support/fast-upstream.ts), driven by wrk (or
 * the undici client) in its own process.
 *
 *   npm run perf -- epp [--seconds 4] [--connections 32] [--rounds 3] [--picks 2000] [--pin on|off]
 *
 * Three targets, alternated each round: `serve` carrying the bytes itself; Envoy
 * (deploy/envoy/gateway-original-dst.yaml, one worker thread) asking the same router
 * process over ext_proc; and that Envoy without its ext_proc filter, the gateway's own
 * floor. Pinned, the proxy tier gets the last core whichever target runs: the router
 * alone, or Envoy and the picker together, so each is measured on the same budget.
 *
 * The decision time is read by a gRPC client of this process that plays Envoy's part:
 * from sending the request body's last chunk to the held headers answer (the pick),
 * one request at a time on one connection, beside the round trip of a gRPC health
 * check on the same connection (what the transport alone costs).
 */
import { readFileSync } from 'node:fs';
import { credentials, makeGenericClientConstructor, Metadata } from '@grpc/grpc-js';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { freePort, peersTierPath, percentiles } from '../src/bench/index.js';
import { extProcServices } from '../src/router/index.js';
import { benchArg } from './support/args.js';
import { gatewayYaml, runEnvoy } from './support/envoy-gateway.js';
import { ROUTERCTL_BIN, startProcess, stopProcess } from './support/processes.js';
import { CAN_PIN, RequestPathRig, median, pct, round2 } from './support/request-path.js';
import type { Run } from './support/request-path.js';
import { writeResult } from './support/results.js';
import type { Figures } from './support/results.js';
import { fileURLToPath } from 'node:url';

const seconds = Number(benchArg('seconds', '4'));
const connections = Number(benchArg('connections', '32'));
const rounds = Number(benchArg('rounds', '3'));
const picks = Number(benchArg('picks', '2000'));
const rig = new RequestPathRig(benchArg('pin', CAN_PIN ? 'on' : 'off'));
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));
const ENVOY = peersTierPath('envoy', 'bin', 'envoy');

const upstream = await startProcess([here('./support/fast-upstream.js'), '3'], /^(http:\/\/.+)$/m, rig.otherCpus);
const upstreams = upstream.out.trim().split(' ');
const eppPort = await freePort();
const router = await startProcess(
  [
    ROUTERCTL_BIN,
    'serve',
    '--no-tui',
    '--port',
    '0',
    '--worker-urls',
    ...upstreams,
    '--worker-queue-limit',
    '64',
    '--epp',
    String(eppPort),
  ],
  /^(http:\/\/\S+)$/m,
  rig.proxyCpus,
);
const gatewayOpts = { cpus: rig.proxyCpus, concurrency: 1 };
const withPicker = await runEnvoy(ENVOY, gatewayYaml('gateway-original-dst.yaml', { eppPort }), gatewayOpts);
const alone = await runEnvoy(
  ENVOY,
  gatewayYaml('gateway-override-host.yaml', { eppPort, engines: upstreams, withoutPicker: true }),
  gatewayOpts,
);

type Target = 'serve' | 'envoy+picker' | 'envoy alone';
const targets: Array<{ name: Target; url: string; watch: Record<string, number> }> = [
  { name: 'serve', url: router.out, watch: { router: router.child.pid!, upstream: upstream.child.pid! } },
  {
    name: 'envoy+picker',
    url: withPicker.url,
    watch: { router: router.child.pid!, envoy: withPicker.child.pid!, upstream: upstream.child.pid! },
  },
  { name: 'envoy alone', url: alone.url, watch: { envoy: alone.child.pid!, upstream: upstream.child.pid! } },
];

// ------------------------------------------------------------ the picker's decision time

type Msg = Record<string, unknown>;
const { extProc, health } = extProcServices();
const addr = `127.0.0.1:${eppPort}`;
const Ext = makeGenericClientConstructor(extProc, 'ExternalProcessor');
const Health = makeGenericClientConstructor(health, 'Health');
const ext = new Ext(addr, credentials.createInsecure()) as unknown as {
  Process: (m: Metadata) => ClientDuplexStream<Msg, Msg>;
  close(): void;
};
const hc = new Health(addr, credentials.createInsecure()) as unknown as {
  Check: (r: { service: string }, cb: (err: unknown, res?: unknown) => void) => void;
  close(): void;
};

const head = (h: Record<string, string>): Msg => ({
  request_headers: { headers: { headers: Object.entries(h).map(([key, v]) => ({ key, raw_value: Buffer.from(v) })) } },
});
const POST = head({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' });

/** One request as Envoy plays it; resolves with µs from the body's end to the pick, after finishing the stream so the attempt settles. */
function pickOnce(body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = ext.Process(new Metadata());
    let sent = 0;
    let n = 0;
    call.on('data', () => {
      n++;
      if (n === 1) {
        const us = (performance.now() - sent) * 1000;
        call.write({ response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] } } });
        call.write({ response_body: { body: Buffer.from('{}'), end_of_stream: true } });
        call.end();
        call.once('end', () => resolve(us));
      }
    });
    call.on('error', reject);
    call.write(POST);
    sent = performance.now();
    call.write({ request_body: { body, end_of_stream: true } });
  });
}

function checkOnce(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    hc.Check({ service: 'readiness' }, (err) => (err ? reject(err as Error) : resolve((performance.now() - t0) * 1000)));
  });
}

async function timed(n: number, once: () => Promise<number>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(200, n); i++) await once();
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await once());
  const p = percentiles(xs);
  return { p50: round2(p.p50!), p99: round2(p.p99!) };
}

/** Both measurements, then the results file; the processes are stopped whatever happens (perf/epp.ts must leave nothing running). */
async function measure(): Promise<void> {
  const figures: Figures = {};
  for (const size of ['short', '16k']) {
    const body = readFileSync(rig.bodyFile(size));
    const pick = await timed(picks, () => pickOnce(body));
    figures[`pick_${size}_p50_us`] = pick.p50;
    figures[`pick_${size}_p99_us`] = pick.p99;
    process.stderr.write(`pick (${size} body, ${body.length} B): p50 ${pick.p50} µs, p99 ${pick.p99} µs\n`);
  }
  const rtt = await timed(picks, checkOnce);
  figures.health_check_p50_us = rtt.p50;
  figures.health_check_p99_us = rtt.p99;
  process.stderr.write(`gRPC health check round trip: p50 ${rtt.p50} µs, p99 ${rtt.p99} µs\n`);

  // ------------------------------------------------------------ throughput

  const body = rig.bodyFile('short');
  for (const t of targets) await rig.drive(t.url, body, connections, 1, t.watch);
  const runs: Record<Target, Run[]> = { serve: [], 'envoy+picker': [], 'envoy alone': [] };
  for (let r = 0; r < rounds; r++)
    for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
      const run = await rig.drive(t.url, body, connections, seconds, t.watch);
      if (run.errors > 0) throw new Error(`${t.name}: ${run.errors} errors in round ${r + 1}`);
      runs[t.name].push(run);
    }

  const rows: string[] = [
    '| target | rate (req/s) | p50 ms | p99 ms | CPU of the proxy core: router | envoy | µs CPU per request: router | envoy |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const t of targets) {
    const rs = runs[t.name];
    const key = t.name.replace(/[^a-z]+/g, '_');
    const cpu = (p: string): number => median(rs.map((x) => x.cpu[p] ?? NaN));
    const perReq = (p: string): number =>
      median(rs.map((x) => (x.perRequestUs[p] ? x.perRequestUs[p]!.user + x.perRequestUs[p]!.kernel : NaN)));
    figures[`${key}_rps`] = Math.round(median(rs.map((x) => x.rps)));
    figures[`${key}_p50_ms`] = round2(median(rs.map((x) => x.p50Ms)));
    figures[`${key}_p99_ms`] = round2(median(rs.map((x) => x.p99Ms)));
    figures[`${key}_router_cpu`] = Number.isNaN(cpu('router')) ? null : round2(cpu('router'));
    figures[`${key}_envoy_cpu`] = Number.isNaN(cpu('envoy')) ? null : round2(cpu('envoy'));
    figures[`${key}_router_us_per_request`] = Number.isNaN(perReq('router')) ? null : Math.round(perReq('router'));
    figures[`${key}_envoy_us_per_request`] = Number.isNaN(perReq('envoy')) ? null : Math.round(perReq('envoy'));
    const cell = (x: number | string | boolean | null | undefined): string => (x === null || x === undefined ? '—' : String(x));
    rows.push(
      `| ${t.name} | ${figures[`${key}_rps`]} | ${figures[`${key}_p50_ms`]} | ${figures[`${key}_p99_ms`]} | ${cell(figures[`${key}_router_cpu`] === null ? null : pct(figures[`${key}_router_cpu`] as number))} | ${cell(figures[`${key}_envoy_cpu`] === null ? null : pct(figures[`${key}_envoy_cpu`] as number))} | ${cell(figures[`${key}_router_us_per_request`])} | ${cell(figures[`${key}_envoy_us_per_request`])} |`,
    );
  }
  const paced = rig.pacedBy(Object.values(runs).flat());
  const bottleneck =
    paced.length > 0
      ? `paced by ${paced.join(', ')}, not the proxy tier`
      : rig.pin
        ? `the proxy core (cpu ${rig.proxyCpus}): the router alone, or Envoy and the picker sharing it`
        : 'unpinned: every process shares the cores';
  process.stdout.write(`${rows.join('\n')}\n\nbottleneck: ${bottleneck}\n`);
  writeResult('epp', { figures, bottleneck });
}

try {
  await measure();
} finally {
  await Promise.all([stopProcess(router.child), stopProcess(upstream.child), withPicker.close(), alone.close()]);
  ext.close();
  hc.close();
  rig.close();
}
