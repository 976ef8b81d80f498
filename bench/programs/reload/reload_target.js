// The reload bench's Node program: a loop calling one function, a breakpoint in the loop.
'use strict';

function price(i) {
  return i * 2; // the function edited
}

function main(rounds) {
  let total = 0;
  for (let i = 0; i < rounds; i++) {
    total += price(i); // the loop body
  }
  console.log(`total ${total}`);
}

main(Number(process.argv[2] || 1000));
