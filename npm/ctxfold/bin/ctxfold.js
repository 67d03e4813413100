#!/usr/bin/env node
// The `ctxfold` command of the npm package: it runs the prebuilt binary of
// this platform, which npm installed as one of the package's
// optionalDependencies (ctxfold-<platform>-<arch>, selected by their os and
// cpu fields). Nothing is downloaded and no install script runs.
'use strict';

const { spawnSync } = require('child_process');

const platformPackage = `ctxfold-${process.platform}-${process.arch}`;
const exe = process.platform === 'win32' ? 'ctxfold.exe' : 'ctxfold';

let binary;
try {
  binary = require.resolve(`${platformPackage}/bin/${exe}`);
} catch (err) {
  process.stderr.write(
    `ctxfold: error: no ctxfold binary for ${process.platform}/${process.arch}: ` +
      `the package ${platformPackage} is not installed\n` +
      `ctxfold: hint: npm installs it from optionalDependencies; reinstall without --omit=optional, ` +
      `or use a release archive\n`);
  process.exit(69);
}

// `ctxfold setup` sees the binary's own path, and writes a command that
// runs without node or npx (docs/INSTALL.md).
const run = spawnSync(binary, process.argv.slice(2), { stdio: 'inherit' });
if (run.error) {
  process.stderr.write(`ctxfold: error: cannot run ${binary}: ${run.error.message}\n`);
  process.exit(70);
}
if (run.signal) {
  // Die of the same signal, so a shell sees 128+N as from the binary.
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
