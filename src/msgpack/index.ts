export { MsgpackError, MsgpackReader } from './reader.js';
export type { MsgpackKind } from './reader.js';
export { encodeMsgpack, MsgpackMap } from './writer.js';
export type { MsgpackValue } from './writer.js';
