// What other areas may import from src/cli: terminal colour, the package version, flag
// coercers, the admin token option and the stop-signal contract shared by every long-running command.
export { colorEnabled, paint } from './color.js';
export type { Style } from './color.js';
export { packageVersion } from './version.js';
export {
  numberAtLeast,
  numberGreaterThan,
  portNumber,
  wholeNumber,
  wholeNumberAtLeast,
  wholeNumberAtLeastOrOff,
  wholeNumberBetween,
} from './coerce.js';
export { StopSignals, signalExitStatus, keepsReadinessPause } from './signals.js';
export type { StopSignal, StopRequest } from './signals.js';
export { didYouMean, MAX_GUESSABLE_LENGTH } from './did-you-mean.js';
export { usageLine } from './usage-line.js';
export { ADMIN_TOKEN_OPTION, adminToken } from './admin-token.js';
export { defineCommand } from './define-command.js';
