// A function expression named as the variable it is assigned to (qs's utils.js writes its helpers so): one
// function, its name twice at one place.
var combine = function combine(a, b) {
  return [].concat(a, b);
};

module.exports = { combine: combine };
