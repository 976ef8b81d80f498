// A test file with blank lines, which runner.js drops as babel does: its lines shift in the code V8 runs.

function largest(values) {

  let best = -Infinity;

  for (const value of values) {
    best = Math.max(best, value); // loop body
  }

  return best; // result
}

module.exports.run = () => {
  console.log("largest", largest([3, 1, 4]));
};
