'use strict';
function shout(text) {
  const loud = text.toUpperCase();
  return `${loud}!`;
}
module.exports = {
  shouts() { if (shout('hi') !== 'HI!') throw new Error('shout'); },
};
