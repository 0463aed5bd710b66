export { EppServer, HEALTH_SERVICES } from './epp-server.js';
export type { EppServerOptions } from './epp-server.js';
export { EndpointChoice, endpointOf } from './endpoint-choice.js';
export { DESTINATION } from './picker-stream.js';
export { services as extProcServices } from './proto.js';
