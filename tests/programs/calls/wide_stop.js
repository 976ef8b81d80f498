// A wide call trace that a stop ends: sixty calls of label with wide arguments (and its helper as a callee), then
// a breakpoint among locals the agent needs (the answer's trace must not push them out).
function shout(text) {
  return text.toUpperCase();
}

function label(item, options) {
  return `${shout(item.name)}:${item.count * options.scale}`;
}

const options = { scale: 3, locale: "en-GB", padding: "                    ", note: "a wide argument ".repeat(4) };
const labels = [];
for (let i = 0; i < 60; i++) {
  labels.push(label({ name: `item number ${i} of the catalogue`, count: i, tags: ["a", "b", "c"] }, options));
}
const firstLabel = labels[0];
const lastLabel = labels[labels.length - 1];
const middleCount = labels.length / 2;
const catalogueName = "the catalogue of wide things";
const checksum = labels.join("").length;
console.log(checksum); // the stop
