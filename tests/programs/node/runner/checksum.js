'use strict';
const { parentPort, workerData } = require('worker_threads');
function checksum(names) {
  let total = 0;
  for (const name of names) {
    total += name.length;
  }
  return total;
}
parentPort.postMessage(checksum(workerData));
