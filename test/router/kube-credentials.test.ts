import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadKubeCredentials } from '../../src/router/discovery/kube-credentials.js';

/** The kubeconfig subset --kubeconfig reads, and what it refuses (docs/http-edge.md §Kubernetes discovery). */
let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function kubeconfig(user: string[], cluster: string[] = ['    server: https://127.0.0.1:6443/'], context: string[] = []): string {
  dir ||= mkdtempSync(path.join(tmpdir(), 'routerctl-kubeconfig-'));
  const file = path.join(dir, 'config');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'current-context: b',
      'clusters:',
      '- name: other',
      '  cluster: {server: "https://10.0.0.1"}',
      '- name: c',
      '  cluster:',
      ...cluster,
      'contexts:',
      '- name: a',
      '  context: {cluster: other, user: u}',
      '- name: b',
      '  context:',
      '    cluster: c',
      '    user: u',
      ...context,
      'users:',
      '- name: u',
      '  user:',
      ...user,
      '',
    ].join('\n'),
  );
  return file;
}

describe('--kubeconfig', () => {
  it("reads the current context's server, token, CA data and namespace", async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const file = kubeconfig(
      ['    token: abc'],
      ['    server: https://127.0.0.1:6443/', `    certificate-authority-data: ${Buffer.from(pem).toString('base64')}`],
      ['    namespace: inference'],
    );
    const c = await loadKubeCredentials(file);
    expect(c).toMatchObject({
      server: 'https://127.0.0.1:6443',
      ca: pem,
      insecureSkipTlsVerify: false,
      namespace: 'inference',
      source: file,
    });
    expect(await c.token()).toBe('abc');
  });

  it('reads a tokenFile relative to the kubeconfig, again at each call, and insecure-skip-tls-verify', async () => {
    const file = kubeconfig(['    tokenFile: token'], ['    server: https://127.0.0.1:6443', '    insecure-skip-tls-verify: true']);
    writeFileSync(path.join(dir, 'token'), 'one\n');
    const c = await loadKubeCredentials(file);
    expect(c.insecureSkipTlsVerify).toBe(true);
    expect(c.namespace).toBeNull();
    expect(await c.token()).toBe('one');
    writeFileSync(path.join(dir, 'token'), 'two\n');
    expect(await c.token()).toBe('two');
  });

  it('refuses a user that authenticates only by an exec plugin or a client certificate, saying so', async () => {
    const exec = kubeconfig(['    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1beta1}']);
    await expect(loadKubeCredentials(exec)).rejects.toMatchObject({
      code: 'RCTL_E_KUBE_CREDENTIALS',
      message: expect.stringContaining('by exec'),
    });
    const cert = kubeconfig(['    client-certificate-data: AAAA', '    client-key-data: AAAA']);
    await expect(loadKubeCredentials(cert)).rejects.toThrow(/by client-certificate-data, which routerctl does not read/);
  });

  it('refuses a file that is missing, or whose current context names no cluster', async () => {
    await expect(loadKubeCredentials('/nonexistent/config')).rejects.toMatchObject({ code: 'RCTL_E_KUBE_CREDENTIALS' });
    dir = mkdtempSync(path.join(tmpdir(), 'routerctl-kubeconfig-'));
    const file = path.join(dir, 'config');
    writeFileSync(file, 'current-context: x\ncontexts: [{name: x, context: {cluster: nope, user: u}}]\n');
    await expect(loadKubeCredentials(file)).rejects.toThrow(/names no cluster with a server/);
  });

  it('without it, in-cluster: the service host and port from the environment, or a clear refusal', async () => {
    await expect(loadKubeCredentials(null, {})).rejects.toThrow(
      /not in a pod \(KUBERNETES_SERVICE_HOST\/PORT unset\); pass --kubeconfig PATH/,
    );
    const c = await loadKubeCredentials(null, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' });
    expect(c).toMatchObject({ server: 'https://[fd00::1]:443', source: 'in-cluster' });
  });
});
