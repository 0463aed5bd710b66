export { tokenize, pieces, countTokens, fnv1a32 } from './tokenizer.js';
export {
  ASSISTANT_PROMPT,
  MESSAGE_CLOSE,
  MESSAGE_FRAME_CHARS,
  messageOpen,
  renderChat,
  renderedChatChars,
  contentText,
} from './chat-template.js';
export type { ChatMessage } from './chat-template.js';
export {
  BLOCK_HASH_START,
  blockHashChain,
  blockHashes,
  blockHashesAfter,
  chatBlockHashes,
  fmix32,
  promptBytes,
  textBlockHashes,
  textDigest,
} from './block-hash.js';
export type { BlockHashState } from './block-hash.js';
export { sglangPageChain, sglangPageHashes } from './sglang-page-hash.js';
export { SIM_WIRE_SHIFT, simWireWords } from './sim-wire-hash.js';
export { KEY_CHAIN_ROOT, keyChain, keyChainOf } from './key-chain.js';
export { closeHole, hashBucket, placeEntry } from './open-table.js';
export { engineBlockKeys, foldHash, sglangCheckpointKeys } from './engine-keys.js';
export type { EngineHashScheme } from './engine-keys.js';
export { NATIVE_FROM_PAGE, digestBytes, digestWords, pageChainWords, pageHasherFor } from './sha256-pages.js';
export type { PageHasher } from './sha256-pages.js';
