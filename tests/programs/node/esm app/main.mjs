import { scale } from "./lib.mjs";

const factor = await Promise.resolve(3);
const values = [1, 2, 3].map((v) => scale(v, factor));
console.log("values", values.join(","));
