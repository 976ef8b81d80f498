export function scale(value, factor) {
  const scaled = value * factor; // scale body
  return scaled;
}
