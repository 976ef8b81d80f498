// A TypeScript file that does not parse: tsx's compiler (esbuild) refuses it when it is loaded.
const prices: number[] = [1, 2, 3];
function total(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0;
}
console.log(total(prices));
