import { expect, it } from "vitest";
import { total } from "../src/missing.js"; // no such module

it("adds the prices", () => {
  expect(total([10, 20])).toBe(30);
});
