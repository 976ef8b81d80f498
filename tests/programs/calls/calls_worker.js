// calls.js's worker thread: squares its own numbers.
const { parentPort, workerData } = require("node:worker_threads");

const square = (x) => x * x;

let total = 0;
for (let i = 1; i <= workerData; i++) total += square(i);
parentPort.postMessage(total);
