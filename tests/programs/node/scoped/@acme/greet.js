// A module under a directory named as npm names a scoped package (@acme): Node's URL for it keeps the '@'.
'use strict';
module.exports = function greet(name) {
  const words = `hello ${name}`; // greet builds the words
  return words;
};
