// An ES module in TypeScript that does not parse: Node's module hooks (tsx) refuse it in their worker.
export function scale(values: number[], factor: number): number[] {
  return values.map((value) => value * factor;
}
console.log(scale([1, 2], 3).join(","));
