// Named function expressions: one named as its variable (named_lib.js's combine), one named otherwise
// (var joinAll = function joinParts: qs's parseValues = function parseQueryStringValues).
const { combine } = require("./named_lib");

var joinAll = function joinParts(parts) {
  return combine(parts[0], parts[1]).join("+");
};

console.log("joined", joinAll([["a"], ["b", "c"]]));
console.log("again", joinAll([["d"], ["e"]]));
