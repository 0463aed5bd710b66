export { PrefixIndex } from './prefix-index.js';
export type { PrefixIndexOptions } from './prefix-index.js';
