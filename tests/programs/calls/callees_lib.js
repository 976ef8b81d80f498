// A helper of another module, called by callees.js's recorded function.
function pad(text) {
  return text.padStart(2, "-");
}

module.exports = { pad };
