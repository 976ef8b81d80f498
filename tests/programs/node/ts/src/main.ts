import { Circle, Shape } from "./shapes";

function total(shapes: Shape[]): number {
  let sum = 0;

  for (const shape of shapes) {
    sum += shape.area(); // add area
  }
  return sum;
}

const shapes: Shape[] = [new Circle(1), new Circle(2)];
const result = total(shapes); // total computed
console.log(`total ${result.toFixed(2)}`);
