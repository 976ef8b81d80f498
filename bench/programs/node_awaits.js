// The workloads of bench/node_async_stacks.py; prints "elapsed <ms>" of the work alone (not Node's start).
//   awaits N        N iterations of an await of an async function that awaits (2 awaits, 1 promise each)
//   deep N DEPTH    the same, each iteration DEPTH synchronous calls deep (V8 records the stack at each await)
//   files DIR       every file under DIR read with fs.promises, 16 at a time (I/O-bound, as programs are)
'use strict';
const fs = require('fs');
const path = require('path');

async function value(i) {
  await null;
  return i;
}

async function awaits(count) {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += await value(i);
  return sum;
}

function nested(depth, i) {
  return depth === 0 ? value(i) : nested(depth - 1, i);
}

async function deep(count, depth) {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += await nested(depth, i);
  return sum;
}

async function walk(dir, found) {
  for (const entry of await fs.promises.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await walk(full, found);
    else if (entry.isFile()) found.push(full);
  }
  return found;
}

async function files(dir) {
  const queue = await walk(dir, []);
  let bytes = 0;
  const reader = async () => {
    while (queue.length) bytes += (await fs.promises.readFile(queue.pop())).length;
  };
  await Promise.all(Array.from({ length: 16 }, reader));
  return bytes;
}

async function main() {
  const [mode, first, second] = process.argv.slice(2);
  const began = process.hrtime.bigint();
  const work = { awaits: () => awaits(Number(first)), deep: () => deep(Number(first), Number(second)),
                 files: () => files(first) }[mode];
  const result = await work();
  console.log(`elapsed ${Number(process.hrtime.bigint() - began) / 1e6} result ${result}`);
}

main();
