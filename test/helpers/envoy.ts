import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { peer } from './peers.js';

const DEPLOY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../deploy/envoy');

/** The two gateway configurations deploy/envoy keeps (docs/endpoint-picker.md §Envoy configurations). */
export type GatewayConfig = 'gateway-original-dst.yaml' | 'gateway-override-host.yaml';

export interface Envoy {
  /** The gateway listener, http://127.0.0.1:PORT. */
  readonly url: string;
  /** Its admin interface (stats, listeners). */
  readonly admin: string;
  readonly child: ChildProcess;
  log(): string;
  /** One counter or gauge from /stats, by its full name; 0 when absent. */
  stat(name: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * The real Envoy (the peers tier's `envoy`), running a deploy/envoy configuration as
 * committed, with only its addresses changed: the listener and admin on free ports,
 * the picker at `eppPort`, and for override_host the engines given.
 */
export async function startEnvoy(config: GatewayConfig, o: { eppPort: number; engines?: readonly string[] }): Promise<Envoy> {
  const bin = peer('envoy').paths.bin!;
  let yaml = readFileSync(path.join(DEPLOY, config), 'utf8');
  const swap = (from: string, to: string): void => {
    if (!yaml.includes(from)) throw new Error(`${config} no longer holds '${from}': update test/helpers/envoy.ts`);
    yaml = yaml.split(from).join(to);
  };
  swap('port_value: 8080', 'port_value: 0');
  swap('port_value: 9901', 'port_value: 0');
  swap('port_value: 9002', `port_value: ${o.eppPort}`);
  if (config === 'gateway-override-host.yaml') {
    const engines = o.engines ?? [];
    const endpoints = engines
      .map((u) => {
        const { hostname, port } = new URL(u);
        return `        - endpoint: { address: { socket_address: { address: ${hostname}, port_value: ${port} } } }`;
      })
      .join('\n');
    yaml = yaml.replace(/(cluster_name: engines\n\s+endpoints:\n\s+- lb_endpoints:\n)((?:\s+- endpoint: .*\n?)+)/, `$1${endpoints}\n`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'routerctl-envoy-'));
  const file = path.join(dir, 'envoy.yaml');
  const adminPath = path.join(dir, 'admin.address');
  writeFileSync(file, yaml);
  let log = '';
  // A base id of its own: parallel Envoys must not share shared-memory regions.
  const baseId = String(1000 + Math.floor(Math.random() * 1_000_000));
  const child = spawn(
    bin,
    ['-c', file, '--disable-hot-restart', '--base-id', baseId, '--admin-address-path', adminPath, '--log-level', 'warn'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const stop = async (): Promise<void> => {
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
    let admin = '';
    while (Date.now() < until && child.exitCode === null) {
      if (existsSync(adminPath)) {
        admin = `http://${readFileSync(adminPath, 'utf8').trim()}`;
        const res = await fetch(`${admin}/listeners?format=json`).catch(() => undefined);
        if (res?.ok) {
          const body = (await res.json()) as {
            listener_statuses?: Array<{ local_address?: { socket_address?: { port_value?: number } } }>;
          };
          const port = body.listener_statuses?.[0]?.local_address?.socket_address?.port_value;
          if (port) {
            return {
              url: `http://127.0.0.1:${port}`,
              admin,
              child,
              log: () => log,
              async stat(name) {
                const text = await (await fetch(`${admin}/stats?filter=${encodeURIComponent(`^${name}$`)}`)).text();
                const m = text.match(/:\s*(\d+)/);
                return m ? Number(m[1]) : 0;
              },
              close: stop,
            };
          }
        }
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`envoy did not start: ${log.slice(-2000)}`);
  } catch (err) {
    await stop();
    throw err;
  }
}
