#!/usr/bin/env node
// The cordon npm package holds no binary: npm installs the one optional
// dependency whose os and cpu match this machine (@cordonhq/cordon-<os>-<cpu>,
// the layout esbuild and Codex use), and this launcher runs its cordon with
// our arguments and stdio, then exits as it did. cordon finds its
// cordon-helper beside itself.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const exe = process.platform === 'win32' ? '.exe' : '';
const pkg = `@cordonhq/cordon-${process.platform}-${process.arch}`;
let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', `cordon${exe}`);
} catch {
  console.error(`cordon: ${pkg} is not installed: this platform has no cordon build, or npm skipped optional dependencies (do not install with --no-optional / --omit=optional)`);
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
// Signals meant for cordon (the client ending the session, Ctrl-C) reach it;
// its own exit decides ours.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', err => {
  console.error(`cordon: cannot run ${binary}: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
