// A loop calling a function the reload tests fix while the program runs (they edit a copy of this file).
function round(x) {
  return Math.round(x); // round body
}

function price(n) {
  const raw = n * 2; // price body
  return round(raw); // price end
}

function main() {
  for (let i = 1; i <= 4; i++) {
    const value = price(i);
    console.log(`price ${i} = ${value}`); // after the call
  }
}

main();
