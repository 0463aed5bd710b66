#!/usr/bin/env node
// Decide colour before anything imports chalk (Ink's chalk ignores NO_COLOR).
if ((process.env.NO_COLOR ?? '') !== '' || process.env.TERM === 'dumb' || process.argv.includes('--no-color')) {
  process.env.FORCE_COLOR = '0';
}
// React's production build halves the cost of a console frame.
process.env.NODE_ENV ??= 'production';

const { main } = await import('../dist/src/cli/main.js');
const code = await main(process.argv.slice(2));
process.exitCode = code;
