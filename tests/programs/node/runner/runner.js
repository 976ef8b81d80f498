// A tiny test runner shaped like jest/mocha --parallel: each spec file runs in a forked process,
// a worker thread computes the run's checksum, results come back over IPC.
'use strict';
const { fork, spawn } = require('child_process');
const { Worker } = require('worker_threads');
const path = require('path');

const specs = ['math.spec.js', 'strings.spec.js'].map((f) => path.join(__dirname, 'specs', f));

function runSpec(file) {
  return new Promise((resolve) => {
    const child = fork(path.join(__dirname, 'child.js'), [file]);
    child.on('message', (result) => resolve(result));
    child.on('exit', (code) => { if (code !== 0) resolve({ file, passed: 0, failed: 1 }); });
  });
}

function checksum(names) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(path.join(__dirname, 'checksum.js'), { workerData: names });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

function version() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'report.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.on('close', () => resolve(out.trim()));
  });
}

async function main() {
  const results = await Promise.all(specs.map(runSpec));
  const sum = await checksum(results.map((r) => path.basename(r.file)));
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log(`passed ${passed}, failed ${failed}, checksum ${sum}, ${await version()}`);
  process.exitCode = failed;
}

main();
