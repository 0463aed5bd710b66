/**
 * Envoy running one of deploy/envoy's gateway configurations as committed, with only
 * its addresses changed: the listener and admin on free ports, the endpoint picker at
 * the port given, and for override_host the engines given (docs/endpoint-picker.md
 * §Envoy configurations). Shared by the Envoy tests (test/helpers/envoy.ts) and
 * perf/epp.ts, so both run the files an operator would.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DEPLOY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/envoy');
const DEPLOY_FROM_SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../deploy/envoy');

/** The two gateway configurations deploy/envoy keeps. */
export type GatewayConfig = 'gateway-original-dst.yaml' | 'gateway-override-host.yaml';

export interface GatewayOptions {
  /** The endpoint picker's gRPC port. */
  readonly eppPort: number;
  /** The engines of override_host's STATIC cluster. */
  readonly engines?: readonly string[];
  /** Without the ext_proc filter: Envoy alone, round robin over the engines (override_host only). */
  readonly withoutPicker?: boolean;
}

/** The configuration's text with its addresses replaced; throws when the file no longer holds what is replaced. */
export function gatewayYaml(config: GatewayConfig, o: GatewayOptions): string {
  const dir = existsSync(DEPLOY) ? DEPLOY : DEPLOY_FROM_SOURCE;
  let yaml = readFileSync(path.join(dir, config), 'utf8');
  const swap = (from: string | RegExp, to: string): void => {
    const next = yaml.replace(from, to);
    if (next === yaml && !(typeof from === 'string' && from === to)) throw new Error(`${config} no longer holds ${String(from)}`);
    yaml = next;
  };
  swap('port_value: 8080', 'port_value: 0');
  swap('port_value: 9901', 'port_value: 0');
  swap('port_value: 9002', `port_value: ${o.eppPort}`);
  if (config === 'gateway-override-host.yaml') {
    const endpoints = (o.engines ?? [])
      .map((u) => {
        const { hostname, port } = new URL(u);
        return `        - endpoint: { address: { socket_address: { address: ${hostname}, port_value: ${port} } } }`;
      })
      .join('\n');
    swap(/(cluster_name: engines\n\s+endpoints:\n\s+- lb_endpoints:\n)((?:\s+- endpoint: .*\n?)+)/, `$1${endpoints}\n`);
  }
  if (o.withoutPicker === true)
    swap(/ {10}- name: envoy\.filters\.http\.ext_proc\n[\s\S]*?(?= {10}- name: envoy\.filters\.http\.router)/, '');
  return yaml;
}

export interface RunningEnvoy {
  /** The gateway listener, http://127.0.0.1:PORT. */
  readonly url: string;
  /** Its admin interface (stats, listeners). */
  readonly admin: string;
  readonly child: ChildProcess;
  log(): string;
  close(): Promise<void>;
}

/** Start Envoy on this configuration text; resolves once its listener is bound. `cpus`: a taskset list to pin it to. */
export async function runEnvoy(bin: string, yaml: string, opts: { cpus?: string; concurrency?: number } = {}): Promise<RunningEnvoy> {
  const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-envoy-'));
  const file = path.join(dir, 'envoy.yaml');
  const adminPath = path.join(dir, 'admin.address');
  writeFileSync(file, yaml);
  let log = '';
  // A base id of its own: parallel Envoys must not share shared-memory regions.
  const baseId = String(1000 + Math.floor(Math.random() * 1_000_000));
  const args = ['-c', file, '--disable-hot-restart', '--base-id', baseId, '--admin-address-path', adminPath, '--log-level', 'warn'];
  if (opts.concurrency !== undefined) args.push('--concurrency', String(opts.concurrency));
  const [cmd, argv] = opts.cpus === undefined ? [bin, args] : ['taskset', ['-c', opts.cpus, bin, ...args]];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const until = Date.now() + 15_000;
    while (Date.now() < until && child.exitCode === null) {
      if (existsSync(adminPath)) {
        const admin = `http://${readFileSync(adminPath, 'utf8').trim()}`;
        const res = await fetch(`${admin}/listeners?format=json`).catch(() => undefined);
        if (res?.ok) {
          const body = (await res.json()) as {
            listener_statuses?: Array<{ local_address?: { socket_address?: { port_value?: number } } }>;
          };
          const port = body.listener_statuses?.[0]?.local_address?.socket_address?.port_value;
          if (port) return { url: `http://127.0.0.1:${port}`, admin, child, log: () => log, close };
        }
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`envoy did not start: ${log.slice(-2000)}`);
  } catch (err) {
    await close();
    throw err;
  }
}
