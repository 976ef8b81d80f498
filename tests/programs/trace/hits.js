// Counts to N (the first argument, default 20000) for trace tests: each turn passes the loop body once.

function main() {
  const n = process.argv.length > 2 ? Number(process.argv[2]) : 20000;
  let total = 0; // before the loop
  for (let i = 0; i < n; i++) {
    total += i; // loop body
    // a comment in the loop
  }
  console.log(`total ${total}`); // after the loop
}

main();
