import type { Argv } from 'yargs';
import { colorEnabled, defineCommand, paint } from '../src/cli/index.js';
import { addConfigOptions } from '../src/config/flags/index.js';
import type { ConfigProblem, ProbeReport, WorkerProbe } from '../src/config/index.js';
import type { Resolution } from '../src/router/index.js';
import { COMMAND_DESCRIPTIONS } from './registry/command-descriptions.js';

interface CheckConfigArgs {
  json?: boolean;
  probe?: boolean;
  strict?: boolean;
  [flag: string]: unknown;
}

const OWN_FLAGS = ['json', 'probe', 'strict'];
const PROBE_TIMEOUT_MS = 2000;
/** The probe lists once and changes no fleet. */
const NO_FLEET = { urls: () => [], add: () => undefined, remove: () => undefined };

const checkConfig = defineCommand({
  command: 'check-config',
  describe: COMMAND_DESCRIPTIONS['check-config'],
  builder: (y: Argv) =>
    addConfigOptions(y)
      .usage(
        '$0 check-config [settings] [--config PATH] [--json] [--probe] [--strict]\n\n' +
          'Resolves every setting (flags > ROUTERCTL_* env > rc file > defaults) and runs the validator serve runs.\n' +
          'Valid: prints each value and where it came from. Invalid: lists every problem, most important first.',
      )
      .option('json', {
        type: 'boolean',
        describe: 'print one JSON object: valid, errors, warnings, config, origins',
        group: 'check-config:',
      })
      .option('probe', {
        type: 'boolean',
        describe: `also contact each worker (${PROBE_TIMEOUT_MS / 1000} s each, in parallel): reachable, models, load reporting, DP size`,
        group: 'check-config:',
      })
      .option('strict', { type: 'boolean', describe: 'exit 1 on warnings too', group: 'check-config:' })
      .example('$0 check-config --policy round_robin --worker-queue-limit 4', 'error: the limit needs --policy cache_aware')
      .example('$0 check-config --config .routerrc.example', 'check an rc file')
      .example(
        '$0 check-config --worker-urls http://10.0.0.5:30001 http://10.0.0.6:30001 --worker-queue-limit 6 --probe',
        'predict an inert queue gate',
      )
      .example('$0 check-config --json | jq .errors', 'machine-readable report')
      .epilogue('Exit status: 0 valid (warnings allowed), 1 invalid, or warnings with --strict. Error codes: man routerctl-check-config.'),
  handler: async (argv) => {
    process.exitCode = await runCheckConfig(argv);
  },
});

async function runCheckConfig(argv: CheckConfigArgs): Promise<number> {
  // Loaded here, not above, so that --help reads the option table alone.
  const { configByFlag, formatProblem, originsByFlag, probeWorkers, problemJson, renderConfigTable, renderProbeTable, resolveConfig } =
    await import('../src/config/index.js');
  const resolved = await resolveConfig({ argv, ignore: OWN_FLAGS });
  const { config, origins, errors } = resolved;

  let probe: ProbeReport | null = null;
  // Under discovery the probe asks DNS or the Kubernetes API once, as serve would at start, and probes what it lists.
  let discovered: { mode: 'dns' | 'kubernetes'; name: string; resolution: Resolution; startFails?: boolean } | null = null;
  if (argv.probe === true && errors.length === 0) {
    let urls: readonly string[] = config.workerUrls;
    if (config.dnsDiscovery !== null) {
      const { DnsDiscovery, silentLogger } = await import('../src/router/index.js');
      const dns = new DnsDiscovery(
        {
          name: config.dnsDiscovery,
          port: config.dnsDiscoveryPort,
          scheme: config.dnsDiscoveryScheme,
          resolver: config.dnsResolver,
          intervalMs: PROBE_TIMEOUT_MS,
        },
        NO_FLEET,
        silentLogger,
      );
      const resolution = await dns.resolve();
      discovered = { mode: 'dns', name: config.dnsDiscovery, resolution };
      urls = resolution.ok ? resolution.urls : [];
    } else if (config.serviceDiscovery) {
      const { KubernetesDiscovery, kubernetesOptions, silentLogger } = await import('../src/router/index.js');
      const k8s = new KubernetesDiscovery({ ...kubernetesOptions(config), requestTimeoutMs: PROBE_TIMEOUT_MS }, NO_FLEET, silentLogger);
      // Credentials that cannot be read would stop serve: said as the answer, not as a crash.
      let startFails = false;
      const resolution = await k8s.listOnce().catch((err: Error): Resolution => {
        startFails = true;
        return { ok: false, reason: err.message };
      });
      discovered = { mode: 'kubernetes', name: k8s.description, resolution, startFails };
      urls = resolution.ok ? resolution.urls : [];
    }
    probe = await probeWorkers(urls, config, { timeoutMs: PROBE_TIMEOUT_MS, origins });
  }
  const warnings = [...resolved.warnings, ...(probe?.warnings ?? [])];
  const valid = errors.length === 0 && !(argv.strict === true && warnings.length > 0);

  if (argv.json === true) {
    const report = {
      valid,
      errors: errors.map(problemJson),
      warnings: warnings.map(problemJson),
      config: configByFlag(config),
      origins: originsByFlag(origins),
      rcFile: resolved.rcFile ?? null,
      probe: probe === null ? null : { timeoutMs: PROBE_TIMEOUT_MS, workers: probe.workers },
      discovery:
        discovered === null
          ? null
          : discovered.resolution.ok
            ? { mode: discovered.mode, name: discovered.name, answered: true, urls: discovered.resolution.urls }
            : { mode: discovered.mode, name: discovered.name, answered: false, reason: discovered.resolution.reason },
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return valid ? 0 : 1;
  }

  const color = colorEnabled(process.stdout);
  const out: string[] = [];
  const rc = resolved.rcFile === undefined ? 'no rc file' : `rc file ${resolved.rcFile}`;
  if (errors.length > 0) {
    for (const p of [...errors, ...warnings]) out.push(formatProblem(p, { color }));
    out.push(`configuration is ${paint('invalid', 'red', color)}: ${count(errors, 'error')}, ${count(warnings, 'warning')} (${rc})`);
    if (argv.probe === true) out.push('probe skipped: fix the errors first');
  } else {
    out.push(`configuration is ${paint('valid', 'green', color)} (${rc})`);
    out.push(renderConfigTable(config, origins, color));
    if (discovered !== null) {
      const r = discovered.resolution;
      const mode = discovered.mode === 'dns' ? 'DNS' : 'Kubernetes';
      out.push(
        r.ok
          ? `${mode} discovery: ${discovered.name} lists ${r.urls.length} worker${r.urls.length === 1 ? '' : 's'}${r.urls.length > 0 ? `: ${r.urls.join(' ')}` : ''}`
          : discovered.startFails === true
            ? `${mode} discovery cannot start: ${r.reason}; serve would exit`
            : `${mode} discovery: ${discovered.name} gave no answer (${r.reason}); serve would start with no worker and keep asking`,
      );
    }
    if (probe !== null) {
      out.push(`probe (${PROBE_TIMEOUT_MS} ms per worker):`);
      out.push(renderProbeTable(probe.workers, color));
      out.push(...pushDetails(probe.workers));
    }
    for (const p of warnings) out.push(formatProblem(p, { color }));
    if (warnings.length > 0) out.push(`${count(warnings, 'warning')}${argv.strict === true ? ' (--strict: failing)' : ''}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return valid ? 0 : 1;
}

/**
 * One more line per worker with KV events: the sockets the router would subscribe to,
 * its replay sockets and where they were read (docs/engine-push.md §Discovery), and
 * what keying a long prompt in its blocks costs here.
 */
function pushDetails(workers: readonly WorkerProbe[]): string[] {
  const withPush = workers.filter((x) => x.reachable && x.push !== null);
  const w = Math.max(0, ...withPush.map((x) => x.url.length));
  return withPush.map((x) => {
    const p = x.push!;
    const replay =
      p.endpoints.replay.length === 0
        ? 'replay: none'
        : `replay: ${p.endpoints.replay.join(' ')} (from ${p.replayFrom === 'config' ? '--kv-events' : p.replayFrom})`;
    const keying =
      p.keying === null
        ? ''
        : `  keying ${p.keying.tokens / 1000}K tokens: ${p.keying.ms.toFixed(1)} ms (${p.keying.scheme}, block ${p.keying.blockSize})`;
    const bound = p.bind ? ' (bound by the router: the engine connects)' : '';
    return `  ${x.url.padEnd(w)}  kv events: ${p.endpoints.kvEvents.join(' ')}${bound}  ${replay}${keying}`;
  });
}

function count(list: readonly ConfigProblem[], noun: string): string {
  return `${list.length} ${noun}${list.length === 1 ? '' : 's'}`;
}

export default checkConfig;
