// The call-trace bench's Node program: work called N times in a loop, after a line to stop at first.
function work(i) {
  return i * 2; // body
}

function main(n) {
  let total = 0; // start
  for (let i = 0; i < n; i++) {
    total += work(i);
  }
  console.log(total);
}

main(Number(process.argv[2]));
