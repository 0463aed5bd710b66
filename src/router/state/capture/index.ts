export { RequestCapture } from './request-capture.js';
export type { CapturedRequest } from './request-capture.js';
