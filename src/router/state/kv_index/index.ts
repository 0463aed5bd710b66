export { engineBlockKeys, foldHash } from './engine-keys.js';
export type { EngineHashScheme } from './engine-keys.js';
export { KvEventIndex } from './kv-event-index.js';
export type { KvEventsStatus, KvKeying } from './kv-event-index.js';
