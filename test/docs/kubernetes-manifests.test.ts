import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultLoaders } from 'cosmiconfig';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTIONS, envName } from '../../src/config/index.js';
import { assertBuilt, repoRoot, runCli } from '../cli/support.js';

const DIR = path.join(repoRoot, 'deploy/kubernetes');

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly [field: string]: unknown;
}
interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: { grpc?: { port: number; service?: string } };
  readinessProbe?: { grpc?: { port: number; service?: string } };
}

/** Every object of every YAML file, read by the YAML loader the rc file and --kubeconfig use (cosmiconfig's). */
function manifests(): Manifest[] {
  const out: Manifest[] = [];
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.yaml'))) {
    const text = readFileSync(path.join(DIR, file), 'utf8');
    for (const doc of text.split(/^---$/m)) {
      const object = defaultLoaders['.yaml'](file, doc) as Manifest | null | undefined;
      if (object) out.push(object);
    }
  }
  return out;
}

const objects = manifests();
const one = (kind: string): Manifest => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};
const deployment = one('Deployment') as Manifest & {
  spec: { template: { spec: { serviceAccountName: string; containers: Container[] } } };
};
const container = deployment.spec.template.spec.containers.find((c) => c.name === 'routerctl')!;
const args = container.args ?? [];

/** `--flag value` pairs and lone boolean flags, by the OPTIONS table's types. */
function flags(argv: readonly string[]): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.replace(/^--/, '');
    const option = OPTIONS.find((o) => o.flag === name) ?? OPTIONS.find((o) => o.type === 'boolean' && `no-${o.flag}` === name);
    if (option === undefined) throw new Error(`deploy/kubernetes: --${name} is no routerctl flag`);
    out.set(name, option.type === 'boolean' ? true : argv[++i]!);
  }
  return out;
}

/**
 * deploy/kubernetes/ runs routerctl as the endpoint picker of an InferencePool
 * (docs/http-edge.md §Kubernetes discovery). Its command line is routerctl's: every flag
 * in OPTIONS, accepted by check-config as it stands; and the objects name each other.
 */
describe('deploy/kubernetes', () => {
  let home: string;
  beforeAll(async () => {
    assertBuilt();
    home = await mkdtemp(path.join(tmpdir(), 'routerctl-manifests-'));
  });
  afterAll(async () => rm(home, { recursive: true, force: true }));

  it('runs routerctl serve with flags that are all in the OPTIONS table', () => {
    expect(container.command).toEqual(['routerctl']);
    expect(args[0]).toBe('serve');
    const set = flags(args.slice(1));
    expect([...set.keys()]).toEqual(
      expect.arrayContaining(['no-tui', 'epp', 'epp-host', 'host', 'port', 'service-discovery', 'inference-pool']),
    );
  });

  it('is a configuration check-config accepts, without errors or warnings', async () => {
    // The admin token comes from a Secret, as the manifest's env says.
    const secret = container.env?.find((e) => e.valueFrom?.secretKeyRef !== undefined);
    expect(secret?.name).toBe(envName('admin-token'));
    const r = await runCli(['check-config', ...args.slice(1), '--json'], { cwd: home, home, env: { [secret!.name]: 'from-a-secret' } });
    const report = JSON.parse(r.stdout) as { valid: boolean; errors: unknown[]; warnings: unknown[]; config: Record<string, unknown> };
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([]);
    expect(report.valid).toBe(true);
    expect(r.code).toBe(0);
    expect(report.config).toMatchObject({ 'service-discovery': true, 'inference-pool': 'llama-pool', epp: 9002, port: 30000 });
  });

  it('names one picker: the pool, the Service, the container ports and the probes agree with the flags', () => {
    const set = flags(args.slice(1));
    const pool = one('InferencePool') as Manifest & {
      spec: {
        selector: { matchLabels: Record<string, string> };
        targetPorts: { number: number }[];
        endpointPickerRef: Record<string, unknown>;
      };
    };
    expect(pool.apiVersion).toBe('inference.networking.k8s.io/v1');
    expect(pool.metadata.name).toBe(set.get('inference-pool'));
    expect(Object.keys(pool.spec.selector.matchLabels).length).toBeGreaterThan(0);
    expect(pool.spec.targetPorts).toHaveLength(1);

    const service = one('Service') as Manifest & {
      spec: { ports: { name: string; port: number; targetPort: string; appProtocol?: string }[] };
    };
    const epp = Number(set.get('epp'));
    expect(pool.spec.endpointPickerRef).toEqual({ name: service.metadata.name, port: { number: epp }, failureMode: 'FailClose' });
    const grpc = service.spec.ports.find((p) => p.port === epp)!;
    expect(grpc.appProtocol).toBe('kubernetes.io/h2c');
    const port = (name: string) => container.ports!.find((p) => p.name === name)!.containerPort;
    expect(port(grpc.targetPort)).toBe(epp);
    expect(port(service.spec.ports.find((p) => p.port !== epp)!.targetPort)).toBe(Number(set.get('port')));
    // Both listen beyond the pod's loopback, or the gateway and the kubelet cannot reach them.
    expect([set.get('host'), set.get('epp-host')]).toEqual(['0.0.0.0', '0.0.0.0']);
    expect(container.livenessProbe?.grpc).toEqual({ port: epp, service: 'liveness' });
    expect(container.readinessProbe?.grpc).toEqual({ port: epp, service: 'readiness' });
  });

  it('grants the service account what --inference-pool reads: get, list and watch on pods and inferencepools', () => {
    const account = one('ServiceAccount');
    expect(deployment.spec.template.spec.serviceAccountName).toBe(account.metadata.name);
    const role = one('Role') as Manifest & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    const binding = one('RoleBinding') as Manifest & {
      subjects: { kind: string; name: string }[];
      roleRef: { kind: string; name: string };
    };
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name }]);
    const grants = (group: string, resource: string) =>
      role.rules
        .find((r) => r.apiGroups.includes(group) && r.resources.includes(resource))
        ?.verbs.slice()
        .sort();
    expect(grants('', 'pods')).toEqual(['get', 'list', 'watch']);
    expect(grants('inference.networking.k8s.io', 'inferencepools')).toEqual(['get', 'list', 'watch']);
  });
});
