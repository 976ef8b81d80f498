// The main thread stops while a worker thread it started keeps computing (or, with "idle", waits for
// messages): the worker is inspected from the main thread's stop, once debug_pause(thread_id) paused it.
// The worker tells the main thread it is running before the main thread's breakpoint line.
'use strict';
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

if (isMainThread) {
  const mode = process.argv[2] || 'busy';
  const worker = new Worker(__filename, { workerData: mode });
  worker.once('message', (said) => {
    const heard = said;
    console.log(`main heard: ${heard}`); // main stops here
    worker.terminate().then(() => console.log('worker stopped'));
  });
} else if (workerData === 'idle') {
  parentPort.on('message', (message) => console.log(`worker got ${message}`));
  parentPort.postMessage('idle');
} else {
  parentPort.postMessage('busy');
  let rounds = 0; // the worker starts counting
  let primes = 0;
  for (;;) {
    rounds++;
    let divisor = 2;
    while (divisor * divisor <= rounds && rounds % divisor !== 0) divisor++;
    if (rounds > 1 && divisor * divisor > rounds) primes++;
  }
}
