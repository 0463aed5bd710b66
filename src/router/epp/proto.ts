import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { loadPackageDefinition } from '@grpc/grpc-js';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/**
 * The package's proto/ folder: two levels above src/router/epp when vitest runs the
 * source, three above dist/src/router/epp when the build runs. The protos are read at
 * start (proto-loader parses them; no protoc at build time).
 */
function protoDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const up of ['../../..', '../../../..']) {
    const dir = path.resolve(here, up, 'proto');
    if (existsSync(path.join(dir, 'ext_proc.proto'))) return dir;
  }
  throw new Error('proto/ext_proc.proto is missing from the package: reinstall routerctl');
}

// keepCase: the field names as Envoy's protos spell them; enums and longs as numbers;
// oneofs: the name of the set member in `request` / `response`.
const LOAD_OPTIONS = { keepCase: true, longs: Number, enums: Number, defaults: true, oneofs: true } as const;

interface Services {
  readonly extProc: ServiceDefinition;
  readonly health: ServiceDefinition;
}

let loaded: Services | undefined;

/** The ext_proc and gRPC health service definitions, loaded once. */
export function services(): Services {
  if (loaded !== undefined) return loaded;
  const dir = protoDir();
  const def = loadSync([path.join(dir, 'ext_proc.proto'), path.join(dir, 'health.proto')], LOAD_OPTIONS);
  const pkg = loadPackageDefinition(def) as unknown as {
    envoy: { service: { ext_proc: { v3: { ExternalProcessor: { service: ServiceDefinition } } } } };
    grpc: { health: { v1: { Health: { service: ServiceDefinition } } } };
  };
  loaded = {
    extProc: pkg.envoy.service.ext_proc.v3.ExternalProcessor.service,
    health: pkg.grpc.health.v1.Health.service,
  };
  return loaded;
}

// ------------------------------------------------------------ the messages, as proto-loader gives and takes them

export interface HeaderValue {
  readonly key: string;
  readonly value?: string;
  readonly raw_value?: Buffer;
}

export interface HttpHeaders {
  readonly headers?: { readonly headers?: readonly HeaderValue[] } | null;
  readonly end_of_stream?: boolean;
}

export interface HttpBody {
  readonly body?: Buffer;
  readonly end_of_stream?: boolean;
}

/**
 * google.protobuf.Struct / Value as proto-loader reads and writes them: protobufjs
 * defines the well-known types itself, in camelCase whatever `keepCase` says, and
 * drops a snake_case field without a word (test/router/endpoint-picker.test.ts).
 */
export interface StructValue {
  readonly fields?: Record<string, ProtoValue>;
}

export interface ProtoValue {
  readonly kind?: string;
  readonly stringValue?: string;
  readonly structValue?: StructValue;
  readonly listValue?: { readonly values?: readonly ProtoValue[] };
}

export interface ProcessingRequest {
  readonly request?: 'request_headers' | 'response_headers' | 'request_body' | 'response_body' | 'request_trailers' | 'response_trailers';
  readonly request_headers?: HttpHeaders;
  readonly response_headers?: HttpHeaders;
  readonly request_body?: HttpBody;
  readonly response_body?: HttpBody;
  readonly metadata_context?: { readonly filter_metadata?: Record<string, StructValue> } | null;
}

/** An Envoy header map as a plain record, names lower-cased; raw_value read as UTF-8 where value is empty. */
export function headerRecord(h: HttpHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of h?.headers?.headers ?? []) {
    const value = v.value !== undefined && v.value !== '' ? v.value : v.raw_value !== undefined ? v.raw_value.toString('utf8') : '';
    out[v.key.toLowerCase()] = value;
  }
  return out;
}

/** OVERWRITE_IF_EXISTS_OR_ADD (envoy.config.core.v3.HeaderValueOption.HeaderAppendAction). */
const OVERWRITE = 2;

/** A header mutation that sets these headers (as raw values: Envoy's own choice since 1.27). */
export function setHeaders(headers: Readonly<Record<string, string>>): { set_headers: object[] } {
  return {
    set_headers: Object.entries(headers).map(([key, value]) => ({
      header: { key, raw_value: Buffer.from(value) },
      append_action: OVERWRITE,
    })),
  };
}

/** A google.protobuf.Struct of string fields. */
export function stringStruct(fields: Readonly<Record<string, string>>): StructValue {
  return { fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { stringValue: v }])) };
}
