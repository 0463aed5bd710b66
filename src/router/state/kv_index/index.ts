export { engineBlockKeys, foldHash } from '../../../prefix/index.js';
export type { EngineHashScheme } from '../../../prefix/index.js';
export { KvEventIndex } from './kv-event-index.js';
export type { KvEventsStatus, KvKeying } from './kv-event-index.js';
