// reload.js in TypeScript, run by tsx: the reload tests fix price while the loop runs (they edit a copy).
function price(n: number): number {
  const raw: number = n * 2; // price body
  return raw; // price end
}

function main(): void {
  for (let i = 1; i <= 4; i++) {
    const value: number = price(i);
    console.log(`price ${i} = ${value}`); // after the call
  }
}

main();
