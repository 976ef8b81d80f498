export interface Shape {
  name: string;
  area(): number;
}

export class Circle implements Shape {
  name = "circle";
  constructor(private readonly radius: number) {}

  area(): number {
    const r2: number = this.radius * this.radius; // circle area
    return Math.PI * r2;
  }
}
