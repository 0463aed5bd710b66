export { engineBlockKeys, foldHash } from '../../../prefix/index.js';
export type { EngineHashScheme } from '../../../prefix/index.js';
export { KvEventIndex } from './kv-event-index.js';
export type { KvEventsStatus, KvKeying } from './kv-event-index.js';
export { choosePrefixSource, eventFormat, eventKeying, keyingName } from './event-keying.js';
export type { EventKeying, PrefixSourceChoice, PrefixSourceInputs, SourceCandidate } from './event-keying.js';
export { PredictedPrefixes, sharedDepth } from './predicted-prefixes.js';
