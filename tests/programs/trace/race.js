// A lost update, the same every run: two worker threads each add 1 to a shared counter N times (the first
// argument, default 500), reading it, then both waiting at a barrier, then writing what each read plus one, so
// every increment of one worker overwrites the other's: the counter ends at N, not 2N. As race.py.
const { Worker, isMainThread, workerData } = require("node:worker_threads");

const COUNTER = 0, ARRIVED = 1, ROUND = 2;

// Both workers meet here: the second to arrive starts the next round and wakes the first.
function meet(shared) {
  const round = Atomics.load(shared, ROUND);
  if (Atomics.add(shared, ARRIVED, 1) === 1) {
    Atomics.store(shared, ARRIVED, 0);
    Atomics.add(shared, ROUND, 1);
    Atomics.notify(shared, ROUND);
  } else {
    while (Atomics.load(shared, ROUND) === round) Atomics.wait(shared, ROUND, round);
  }
}

function work(shared, rounds) {
  for (let i = 0; i < rounds; i++) {
    const seen = Atomics.load(shared, COUNTER);
    meet(shared); // both have read the counter
    Atomics.store(shared, COUNTER, seen + 1); // the write
    meet(shared); // both have written it
  }
}

if (isMainThread) {
  const rounds = Number(process.argv[2] || 500);
  const shared = new Int32Array(new SharedArrayBuffer(12)); // before the workers
  const workers = [1, 2].map(() => new Worker(__filename, { workerData: { shared, rounds } }));
  let left = workers.length;
  for (const worker of workers) {
    worker.on("exit", () => {
      if (--left === 0) console.log(`counter ${shared[COUNTER]} of ${2 * rounds}`); // after the workers
    });
  }
} else {
  work(workerData.shared, workerData.rounds);
}
