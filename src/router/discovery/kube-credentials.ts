import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultLoaders } from 'cosmiconfig';
import { ErrorCodes, RouterctlError } from '../../errors/index.js';

/** Where a pod's service account is mounted (the in-cluster credentials). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** How to reach the API server: its base URL, how to trust it, and how to prove who we are. */
export interface KubeCredentials {
  /** `https://host:port` (or http for a local test server), no trailing slash. */
  readonly server: string;
  /** A bearer token, read again before each request: bound service-account tokens rotate. */
  token(): Promise<string | null>;
  /** PEM of the CA that signs the server's certificate; null: the system's. */
  readonly ca: string | null;
  readonly insecureSkipTlsVerify: boolean;
  /** The namespace the credentials imply (the context's, or the pod's own); null: none. */
  readonly namespace: string | null;
  /** Where they came from, for the log: `in-cluster` or the kubeconfig path. */
  readonly source: string;
}

/** A start-up failure an operator fixes in the credentials (docs/http-edge.md §Kubernetes discovery). */
function credentialsError(message: string, cause?: unknown): RouterctlError {
  return new RouterctlError(ErrorCodes.KUBE_CREDENTIALS, message, cause === undefined ? {} : { cause });
}

/** `--kubeconfig PATH` when given, else the pod's service account. */
export async function loadKubeCredentials(kubeconfig: string | null, env: NodeJS.ProcessEnv = process.env): Promise<KubeCredentials> {
  if (kubeconfig === null) return inCluster(env);
  // An rc file's path is not expanded by a shell.
  return fromKubeconfig(kubeconfig.startsWith('~/') ? path.join(os.homedir(), kubeconfig.slice(2)) : kubeconfig);
}

async function inCluster(env: NodeJS.ProcessEnv): Promise<KubeCredentials> {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw credentialsError(
      '--service-discovery found no Kubernetes API server: not in a pod (KUBERNETES_SERVICE_HOST/PORT unset); pass --kubeconfig PATH',
    );
  }
  const tokenFile = path.join(SERVICE_ACCOUNT_DIR, 'token');
  const ca = await readOptional(path.join(SERVICE_ACCOUNT_DIR, 'ca.crt'));
  const namespace = (await readOptional(path.join(SERVICE_ACCOUNT_DIR, 'namespace')))?.trim() || null;
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    token: async () => (await readOptional(tokenFile))?.trim() || null,
    ca,
    insecureSkipTlsVerify: false,
    namespace,
    source: 'in-cluster',
  };
}

async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return null;
  }
}

type Named<T> = { name?: unknown } & Record<string, T | unknown>;

/**
 * The part of a kubeconfig a watch needs: the current context's cluster (server,
 * certificate-authority or -data, insecure-skip-tls-verify), its user's token or
 * tokenFile, and its namespace. Exec plugins, auth providers and client certificates
 * are not read; a user that has only those is refused with that said.
 */
async function fromKubeconfig(file: string): Promise<KubeCredentials> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw credentialsError(`--kubeconfig ${file} cannot be read: ${(err as Error).message}`, err);
  }
  let doc: unknown;
  try {
    doc = defaultLoaders['.yaml'](file, text);
  } catch (err) {
    throw credentialsError(`--kubeconfig ${file} is not YAML: ${(err as Error).message}`, err);
  }
  const root = isRecord(doc) ? doc : {};
  const contextName = typeof root['current-context'] === 'string' ? root['current-context'] : undefined;
  const contexts = entries(root.contexts, 'context');
  const context = contextName !== undefined ? contexts.get(contextName) : contexts.size === 1 ? [...contexts.values()][0] : undefined;
  if (context === undefined) throw credentialsError(`--kubeconfig ${file}: no current-context, or it names no context`);
  const cluster = entries(root.clusters, 'cluster').get(String(context.cluster));
  if (cluster === undefined || typeof cluster.server !== 'string') {
    throw credentialsError(`--kubeconfig ${file}: context ${contextName ?? ''} names no cluster with a server`);
  }
  const user = entries(root.users, 'user').get(String(context.user)) ?? {};
  const dir = path.dirname(file);
  const resolve = (p: string): string => (path.isAbsolute(p) ? p : path.join(dir, p));

  let ca: string | null = null;
  if (typeof cluster['certificate-authority-data'] === 'string') {
    ca = Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  } else if (typeof cluster['certificate-authority'] === 'string') {
    const caFile = resolve(cluster['certificate-authority']);
    ca = await readOptional(caFile);
    if (ca === null) throw credentialsError(`--kubeconfig ${file}: certificate-authority ${caFile} cannot be read`);
  }

  let token: () => Promise<string | null>;
  if (typeof user.token === 'string') {
    const fixed = user.token;
    token = async () => fixed;
  } else if (typeof user.tokenFile === 'string') {
    const tokenFile = resolve(user.tokenFile);
    token = async () => (await readOptional(tokenFile))?.trim() || null;
  } else {
    const unsupported = ['exec', 'auth-provider', 'client-certificate', 'client-certificate-data', 'username'].find((k) => k in user);
    if (unsupported !== undefined) {
      throw credentialsError(
        `--kubeconfig ${file}: user ${String(context.user)} authenticates by ${unsupported}, which routerctl does not read; give it a token or tokenFile (a service account's)`,
      );
    }
    token = async () => null;
  }
  return {
    server: cluster.server.replace(/\/+$/, ''),
    token,
    ca,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    namespace: typeof context.namespace === 'string' && context.namespace !== '' ? context.namespace : null,
    source: file,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A kubeconfig list (`- name: x; cluster: {...}`) by name. */
function entries(list: unknown, field: string): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  if (!Array.isArray(list)) return out;
  for (const item of list as Named<unknown>[]) {
    if (isRecord(item) && typeof item.name === 'string' && isRecord(item[field])) out.set(item.name, item[field]);
  }
  return out;
}
