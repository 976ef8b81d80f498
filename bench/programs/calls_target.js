// The call-trace bench's Node program: work called N times in a loop, after a line to stop at first.
function work(i) {
  return i * 2; // body
}

function other() {
  return work(-1); // (with a depth, work is other's callee: main's calls of it are decided in the page, unrecorded)
}

function main(n) {
  let total = 0; // start
  for (let i = 0; i < n; i++) {
    total += work(i);
  }
  console.log(total, other());
}

main(Number(process.argv[2])); // run
