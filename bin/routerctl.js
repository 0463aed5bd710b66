#!/usr/bin/env node
// Decide colour before anything imports chalk (Ink's chalk ignores NO_COLOR).
if ((process.env.NO_COLOR ?? '') !== '' || process.env.TERM === 'dumb' || process.argv.includes('--no-color')) {
  process.env.FORCE_COLOR = '0';
}
// React's production build halves the cost of a console frame.
process.env.NODE_ENV ??= 'production';

const { main } = await import('../dist/commands/index.js');
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Every command resolves only when its work is done. Whatever still holds the event
// loop then (a config module's forgotten timer, a pipe read that never returns) must
// not keep the process alive: give output a moment to drain, then leave.
setTimeout(() => process.exit(code), 250).unref();
