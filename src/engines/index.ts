export { ENGINE_REPLY_MAX_BYTES, classifyFailure, getEngineReply } from './engine-reply.js';
export type { EngineGetOptions, EngineReply, TransportFailure } from './engine-reply.js';
export { EngineConnection } from './engine-connection.js';
export {
  LOAD_ENDPOINTS,
  LOAD_PATHS,
  LOAD_SOURCES,
  MAX_RANKS_PER_WORKER,
  readGetLoad,
  readLoadReply,
  readMetricsText,
  readV1Loads,
  summarizeLoad,
  vllmBlockSize,
} from './load-formats.js';
export type { LoadRead, LoadShape, LoadSource, LoadSummary, RankReading, Readings } from './load-formats.js';
export { POLL_FAILURE_REASONS, pollEngineLoad } from './load-poll.js';
export type { LoadPoll, PollFailureReason } from './load-poll.js';
export {
  kvEventsEndpoint,
  parseJson,
  parseKvEventSources,
  parseModels,
  parseServerInfo,
  pushEndpoint,
  replayEndpoints,
} from './introspection.js';
export type { ModelsInfo, ServerInfo } from './introspection.js';
export type { PushInfo } from './push/push-info.js';
export {
  decodeKvEventBatch,
  decodeLoadStat,
  hashToBigInt,
  KV_EVENT_LIMITS,
  KvEventFeed,
  kvEventsRuleFor,
  mergePushInfo,
  parseZmqEndpoint,
  pushInfoFromRule,
  PushDecodeError,
  PushSubscription,
  readPushFrame,
  replayFrom,
  sequenceFrame,
  SequenceTracker,
  ZmtpSubscription,
} from './push/index.js';
export type {
  BlockHashes,
  EngineKind,
  KvEvent,
  KvEventBatch,
  KvEventFeedOptions,
  KvEventsRule,
  KvCatchUp,
  KvFeedSink,
  KvFeedStats,
  LoadStat,
  MergedPush,
  PushFrame,
  ReplayedBatch,
  SequenceVerdict,
  SkippedEvent,
} from './push/index.js';
